//! Pajé writer (placeholder).
