//! The module graph of `src/` has no cycle, and the format registry is used by
//! the command layer only (docs/architecture.md). Read from the sources: every
//! `crate::` and `super::` path outside test code is an edge from the module
//! of its file to the deepest module the path names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`paje::reader`) of every source file of the library.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("bin") {
                    stack.push(path);
                }
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] {
                continue;
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The code of a file before its test module, without comments.
fn non_test_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths after `crate::` or `super::` in `code`, split into segments,
/// including the groups of `use crate::{a, b::c}`.
fn paths(code: &str, module: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let base: Vec<&str> = module.split("::").collect();
    for (prefix, root) in [("crate::", 0usize), ("super::", 1)] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().last();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut start: Vec<String> = if root == 0 {
                Vec::new()
            } else {
                base[..base.len().saturating_sub(1)]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            let tail: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':' || *c == '{')
                .collect();
            if let Some(group_at) = tail.find('{') {
                start.extend(
                    tail[..group_at]
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
                let close = rest.find('}').unwrap_or(rest.len());
                for item in rest[group_at + 1..close].split(',') {
                    let mut p = start.clone();
                    p.extend(
                        item.trim()
                            .split("::")
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    );
                    out.push(p);
                }
            } else {
                start.extend(tail.split("::").filter(|s| !s.is_empty()).map(String::from));
                out.push(start);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &mods {
        let targets = edges.entry(module.clone()).or_default();
        for p in paths(&non_test_code(path), module) {
            // The deepest module the path names.
            let target = (1..=p.len())
                .rev()
                .map(|n| p[..n].join("::"))
                .find(|m| mods.contains_key(m));
            if let Some(t) = target {
                // A module using its own submodule, or itself, is no import back.
                if t != *module && !t.starts_with(&format!("{module}::")) {
                    targets.insert(t);
                }
            }
        }
    }
    edges
}

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let edges = graph();
    // Depth-first search for a back edge, reporting the cycle found.
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for t in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(t, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        let cycle = visit(m, &edges, &mut Vec::new(), &mut done);
        assert!(
            cycle.is_none(),
            "import cycle: {}",
            cycle.unwrap().join(" -> ")
        );
    }
    assert!(edges.len() > 30, "only {} modules found", edges.len());
}

#[test]
fn the_registry_is_imported_by_the_command_layer_only() {
    for (module, targets) in graph() {
        if targets.contains("format") {
            assert!(
                module == "cli" || module.starts_with("cmd"),
                "{module} imports the format registry"
            );
        }
    }
}

/// The layers of `src/`, bottom up: a module imports only modules of its
/// own layer or below (docs/architecture.md draws them).
const LAYERS: [&[&str]; 9] = [
    &[
        "error", "bytes", "glob", "number", "decimal", "swar", "fasthash", "pool",
    ],
    &["model"],
    &["pipe", "io", "table"],
    &["exec"],
    &["stages"],
    &["formats"],
    &["stats"],
    &["format"],
    &["cli", "cmd"],
];

fn layer_of(module: &str) -> usize {
    let top = module.split("::").next().unwrap();
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top))
        .unwrap_or_else(|| panic!("module `{module}` is in no layer: add it to LAYERS"))
}

#[test]
fn modules_import_only_their_layer_or_below() {
    for (module, targets) in graph() {
        for target in targets {
            assert!(
                layer_of(&target) <= layer_of(&module),
                "{module} imports {target}, a layer above it"
            );
        }
    }
}

/// The format of a module under `formats::`, if it is one.
fn format_of(module: &str) -> Option<&str> {
    module
        .strip_prefix("formats::")
        .map(|rest| rest.split("::").next().unwrap())
}

#[test]
fn formats_do_not_import_each_other_but_the_stream_codec() {
    for (module, targets) in graph() {
        let Some(own) = format_of(&module) else {
            continue;
        };
        for target in targets {
            if let Some(other) = format_of(&target) {
                assert!(
                    other == own || other == "stream",
                    "{module} imports {target}: formats share the model, the stages and exec, not each other's code"
                );
            }
        }
    }
}

/// The `impl` blocks of `code` whose header names `RecordSource for`: the
/// header and the body, up to the closing brace at the header's indent.
fn record_source_impls(code: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let header = line.trim_start();
        if !(header.starts_with("impl") && header.contains(" RecordSource for ")) {
            continue;
        }
        let indent = line.len() - header.len();
        let close = format!("{}}}", " ".repeat(indent));
        let body = lines[i + 1..]
            .iter()
            .take_while(|l| **l != close)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        out.push((header.to_string(), body));
    }
    out
}

/// A source that wraps another answers every question of the source
/// contract itself (`pipe::SourceStage`, which has no defaults): one that
/// implemented `RecordSource` directly would inherit a reader's defaults
/// for the rows it passes on. Only the trait's own forwarding impls (the
/// boxed source, every stage) stand apart.
#[test]
fn sources_that_wrap_a_source_implement_the_stage_contract() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrappers = Vec::new();
    let mut readers = 0;
    for (module, path) in modules(&src) {
        for (header, body) in record_source_impls(&non_test_code(&path)) {
            let forwarding = module == "pipe"
                && (header.contains("for Box<dyn RecordSource>")
                    || header.contains("<T: SourceStage>"));
            if forwarding {
                continue;
            }
            readers += 1;
            let generic_over_a_source = header
                .split(" RecordSource for ")
                .next()
                .is_some_and(|params| params.contains("RecordSource"));
            if generic_over_a_source || body.contains(".next_record(") {
                wrappers.push(format!("{module}: {header}"));
            }
        }
    }
    assert!(readers >= 10, "the readers were not found: {readers}");
    assert!(
        wrappers.is_empty(),
        "these wrap a source but implement RecordSource directly (implement SourceStage): {wrappers:#?}"
    );
}
