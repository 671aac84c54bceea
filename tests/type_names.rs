//! One meaning per name: the type names `src/` defines more than once (each
//! module's own `struct`, `enum`, `trait` or `type`, outside test code) are
//! only those listed here, each a name for one concept in every module that
//! defines it. A new name defined twice fails until it is renamed or, when
//! it is the same concept, listed with what it means.

use std::collections::BTreeMap;
use std::path::Path;

/// The names defined in more than one module for the same concept, and
/// that concept.
const SAME_CONCEPT: &[(&str, &str)] = &[
    ("Args", "a command's parsed arguments"),
    (
        "Channel",
        "what message halves pair within: communicator, ends, tag",
    ),
    ("Clock", "a trace's clock: its tick and origin"),
    ("Comm", "a communicator as a format defines it"),
    ("ContainerEntry", "a Pajé container as its table keeps it"),
    ("Declared", "a location as a stage keeps its declaration"),
    ("Definitions", "a trace's definition tables"),
    ("Event", "an event record as its format decodes it"),
    ("Field", "one field of a record definition"),
    ("Fields", "the fields of one record or line"),
    ("Figures", "a report's sums for one key"),
    ("Half", "a message half waiting for its partner"),
    ("Ids", "a TRACE file's element identifiers"),
    (
        "Instance",
        "one instance of a collective, its participants so far",
    ),
    (
        "Lane",
        "a lane of a location: where its extents are laid out without overlapping",
    ),
    ("Line", "one line of text read"),
    ("Lines", "lines of text, each with its end"),
    ("Metric", "a metric as OTF2 defines it"),
    (
        "Registry",
        "a writer's definitions, each made once and referred to",
    ),
    ("Resource", "a TRACE resource and its claims"),
    ("Rows", "rows held in memory"),
    ("Scope", "where a reader looks definitions up"),
    ("Series", "one counter's samples"),
    ("Thinning", "what a reader leaves out for a slice's T0"),
    ("Trace", "everything read of one trace's index or file"),
    ("Waiting", "a row or event held until its turn"),
];

/// Every type name defined outside test code, with where.
fn definitions(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for (n, line) in code.lines().enumerate() {
                if let Some(name) = defined_name(line) {
                    let place = format!("{}:{}", path.display(), n + 1);
                    out.entry(name).or_default().push(place);
                }
            }
        }
    }
    out
}

/// The name a line defines at module level, if any (an associated type,
/// indented in its trait or impl, is the trait's name, not a new one).
fn defined_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    if words.peek().is_some_and(|w| w.starts_with("pub")) {
        words.next();
    }
    let keyword = words.next()?;
    let indented = line.starts_with(char::is_whitespace);
    let item = matches!(keyword, "struct" | "enum" | "trait" | "union")
        || (keyword == "type" && !indented);
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (item && name.starts_with(|c: char| c.is_ascii_uppercase())).then_some(name)
}

#[test]
fn each_name_defined_twice_is_one_concept() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let all = definitions(&src);
    assert!(all.len() > 100, "the definitions were not found");
    let twice: BTreeMap<&String, &Vec<String>> =
        all.iter().filter(|(_, places)| places.len() > 1).collect();
    let listed: BTreeMap<&str, &str> = SAME_CONCEPT.iter().copied().collect();
    let unlisted: Vec<String> = twice
        .iter()
        .filter(|(name, _)| !listed.contains_key(name.as_str()))
        .map(|(name, places)| format!("{name}: {}", places.join(", ")))
        .collect();
    assert!(
        unlisted.is_empty(),
        "names defined more than once for different things: rename one, or list it in SAME_CONCEPT with the concept\n{}",
        unlisted.join("\n")
    );
    let stale: Vec<&str> = listed
        .keys()
        .filter(|name| !twice.keys().any(|t| t.as_str() == **name))
        .copied()
        .collect();
    assert!(
        stale.is_empty(),
        "listed but no longer defined twice: {stale:?}"
    );
}
