//! No function of the library (outside its test modules) is longer than
//! [`MAX_LINES`] lines, from its `fn` line to its closing brace: a longer
//! one does several things and is split by concern. The test lists every
//! function over the limit.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 80;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The name of the function a line declares, if it starts one.
fn declared_fn(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    while let Some(&w) = words.peek() {
        if w == "pub" || w.starts_with("pub(") || matches!(w, "const" | "unsafe" | "async") {
            words.next();
        } else {
            break;
        }
    }
    if words.next()? != "fn" {
        return None;
    }
    let name = words.next()?;
    Some(name.split(['(', '<']).next().unwrap_or(name))
}

/// (lines, file:line, name) of each function of `path` over the limit.
fn long_functions(path: &Path) -> Vec<(usize, String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for i in 0..end {
        let Some(name) = declared_fn(lines[i]) else {
            continue;
        };
        let indent = &lines[i][..lines[i].len() - lines[i].trim_start().len()];
        let close = format!("{indent}}}");
        // A declaration without a body (a trait's) ends with `;` before any `{`.
        let body = lines[i..end]
            .iter()
            .position(|l| l.trim_end().ends_with('{') || l.trim_end().ends_with(';'))
            .filter(|&k| lines[i + k].trim_end().ends_with('{'));
        let Some(open) = body else { continue };
        // A one-line body closes on its own line.
        if lines[i + open].trim_end().ends_with('}') {
            continue;
        }
        if let Some(k) = lines[i + open..end].iter().position(|l| *l == close) {
            let len = open + k + 1;
            if len > MAX_LINES {
                out.push((
                    len,
                    format!("{}:{}", path.display(), i + 1),
                    name.to_string(),
                ));
            }
        }
    }
    out
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 50, "only {} source files found", files.len());
    let mut long: Vec<_> = files.iter().flat_map(|f| long_functions(f)).collect();
    long.sort_by_key(|l| std::cmp::Reverse(l.0));
    let list: Vec<String> = long
        .iter()
        .map(|(n, at, name)| format!("  {n:4} lines  {name}  {at}"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {MAX_LINES} lines:\n{}",
        list.join("\n")
    );
}

#[test]
fn the_check_finds_a_long_function() {
    let dir = std::env::temp_dir().join(format!("function-length-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("long.rs");
    let body: String = (0..MAX_LINES)
        .map(|i| format!("    let x{i} = {i};\n"))
        .collect();
    let text = format!(
        "trait T {{\n    fn declared(&self) -> u8;\n}}\n\npub(crate) fn long() {{\n{body}}}\n\nfn short() {{\n    let y = 1;\n}}\n"
    );
    std::fs::write(&file, text).unwrap();
    let found = long_functions(&file);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, MAX_LINES + 2);
    assert_eq!(found[0].2, "long");
}
