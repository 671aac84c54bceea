//! Shell-style globs over whole values (location ids and names, categories),
//! shared by the filter and by readers that leave unselected locations
//! unread.

/// A shell-style glob over a whole value: `*` any run, `?` one character,
/// `[abc]`, `[a-z]`, `[!x]`, `{a,b}` (through `globset`; `/` is an ordinary
/// character).
#[derive(Debug, Clone)]
pub struct Glob {
    matcher: globset::GlobMatcher,
    pattern: String,
}

impl Glob {
    /// Compiles `pattern`, rejecting malformed ones (an unclosed `[`...).
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("bad glob `{pattern}`: {}", e.kind()))?;
        Ok(Glob {
            matcher: glob.compile_matcher(),
            pattern: pattern.to_string(),
        })
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        self.matcher.is_match(text)
    }
}
