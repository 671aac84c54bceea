//! Intel STF (Structured Tracefile Format, Intel Trace Analyzer and
//! Collector) in tracepipe's documented encoding (`docs/stf.md`): a file set
//! of self-defining binary records, or the single-file form.
//!
//! `layout.rs` is the definition layer (specifiers, the specification's
//! catalogue, the generic codec), `feed.rs` the bounded reading of one
//! component, `reader.rs` and `writer.rs` the mapping to and from the stream,
//! `single.rs` the single-file container, `dump.rs` the text `stftool --dump`
//! prints.

pub mod dump;
pub mod feed;
pub mod generic;
pub mod layout;
pub mod reader;
pub mod single;
pub mod writer;

use crate::pipe::Probe;

/// Prefix of the meta names that carry STF-specific values.
pub const PREFIX: &str = crate::model::record::prefix::STF;

/// First bytes of every component file: the `file_header` id and the magic.
pub const MAGIC: [u8; 5] = [0xFE, b'S', b'T', b'F', 0];

/// Layout version in the file header.
pub const VERSION: u16 = 1;

/// Record id of `define_record(U1 id, C1[U2] specifier)`.
pub const DEFINE_RECORD: u8 = 0xFF;

/// Record id of the file header.
pub const FILE_HEADER: u8 = 0xFE;

/// Ids from here up are reserved; only the two above are used.
pub const FIRST_RESERVED: u8 = 0xEA;

/// What a component file is, as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    /// The index and definition file, `<t>.stf`.
    Index = 0,
    /// The declaration file, `<t>.stf.dcl`.
    Declarations = 1,
    /// Messages, `<t>.stf.msg`.
    Messages = 2,
    /// Collective operations, `<t>.stf.cop`.
    Collectives = 3,
    /// Per-process records, `<t>.stf.<k>.<n>`.
    Process = 4,
    /// Anchors of a data file, `<file>.anc`.
    Anchors = 5,
    /// Statistics, `<t>.stf.sts`.
    Statistics = 6,
    /// The single-file container, `<t>.single.stf`.
    Single = 7,
}

impl Component {
    /// The component kind with header code `code`.
    pub fn from_code(code: u8) -> Option<Component> {
        use Component::*;
        [
            Index,
            Declarations,
            Messages,
            Collectives,
            Process,
            Anchors,
            Statistics,
            Single,
        ]
        .into_iter()
        .find(|c| *c as u8 == code)
    }
}

/// The header bytes of a component of kind `kind`.
pub fn header(kind: Component) -> [u8; 9] {
    let v = VERSION.to_le_bytes();
    [
        MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], MAGIC[4], v[0], v[1], kind as u8, 0,
    ]
}

/// A file is STF in tracepipe's encoding when it starts with the header of an
/// index or single-file component.
pub fn sniff(probe: &Probe) -> bool {
    probe.head.len() >= 8
        && probe.head[..5] == MAGIC
        && matches!(
            Component::from_code(probe.head[7]),
            Some(Component::Index | Component::Single)
        )
}

/// What to tell the owner of an STF file this reader cannot decode.
pub const FOREIGN_HINT: &str = "not an STF file in tracepipe's documented encoding (docs/stf.md): \
     Intel's own binary layout was never published; export the trace with \
     `stftool FILE --dump > FILE.txt` and read that text (`-f stf-dump`)";

/// The stream name of willy (process/thread/group id) `raw` when the trace
/// names it nowhere: `#` and the number, which the writer maps back.
pub fn default_willy_name(raw: u32) -> String {
    format!("#{raw}")
}

/// The raw id a location named `#N` stands for.
pub fn raw_willy(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('#')?;
    if digits.is_empty() || digits.len() > 10 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u32 = digits.parse().ok()?;
    (n.to_string() == digits).then_some(n)
}

/// Reference value that means "none" in an id field.
pub const NONE: u32 = u32::MAX;

/// `receive_time` of a message whose receiver time is unknown (a send half).
pub const RECEIVER_UNKNOWN: i64 = i64::MIN;

/// `receive_time` of a message whose sender time is unknown (a receive half).
pub const SENDER_UNKNOWN: i64 = i64::MIN + 1;

/// Classes of the declarations the reader takes into its tables rather than
/// making rows of them (the writer declares them from the rows).
pub const DECLARATIONS: &[&str] = &[
    "stf_string",
    "class_definition",
    "function_definition",
    "willy_name",
    "communicator_definition",
    "counter_definition",
    "collective_operation_definition",
    "scope_definition",
];

/// Classes only the index holds (the clock, the components, the metas).
pub const INDEX_ONLY: &[&str] = &[
    "clock_resolution",
    "duration",
    "file_declaration",
    "anchor_file_declaration",
    "anchor",
    "tracepipe_meta",
];
