//! The single-file form (`<t>.single.stf`): a header, a directory of the
//! components (name, offset, length), then each component's bytes unchanged,
//! so a component is read in place.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::feed::Feed;
use super::layout::Scalar;
use super::{header, Component};
use crate::error::{Error, Result};
use crate::io::Output;

/// Name of the index component in the directory.
pub const INDEX: &str = "stf";

/// Where a finished component is: a file beside the index, or a nameless
/// temporary file, open, to be copied into the single file.
pub enum Stored {
    /// A file of the set.
    Named(PathBuf),
    /// A temporary file already removed from its folder.
    Nameless(File),
}

/// Writes the container: the index (in memory) and the components.
pub fn assemble(
    mut out: Output,
    index: &[u8],
    components: Vec<(String, Component, Stored)>,
) -> Result<()> {
    let mut sizes = vec![(INDEX.to_string(), index.len() as u64)];
    let mut files = Vec::with_capacity(components.len());
    for (suffix, _, stored) in components {
        let shown = match &stored {
            Stored::Named(path) => path.display().to_string(),
            Stored::Nameless(_) => format!("the temporary `{suffix}` component"),
        };
        let mut file = match stored {
            Stored::Named(path) => File::open(&path).map_err(|e| Error::io(&*shown, e))?,
            Stored::Nameless(file) => file,
        };
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(&*shown, e))?;
        let len = file.metadata().map_err(|e| Error::io(&*shown, e))?.len();
        sizes.push((suffix, len));
        files.push((shown, file));
    }
    let mut dir = header(Component::Single).to_vec();
    dir.extend_from_slice(&(sizes.len() as u32).to_le_bytes());
    let table: usize = sizes.iter().map(|(n, _)| 2 + n.len() + 16).sum();
    let mut offset = (dir.len() + table) as u64;
    for (name, len) in &sizes {
        dir.extend_from_slice(&(name.len() as u16).to_le_bytes());
        dir.extend_from_slice(name.as_bytes());
        dir.extend_from_slice(&offset.to_le_bytes());
        dir.extend_from_slice(&len.to_le_bytes());
        offset += len;
    }
    out.write_line(&dir)?;
    out.write_line(index)?;
    let mut buf = vec![0u8; 256 * 1024];
    for (shown, mut f) in files {
        loop {
            let n = f.read(&mut buf).map_err(|e| Error::io(&*shown, e))?;
            if n == 0 {
                break;
            }
            out.write_line(&buf[..n])?;
        }
    }
    out.finish()
}

/// The directory of a container: each component's name, offset and length,
/// checked to lie inside the file without overlapping.
pub fn directory(name: &str, path: &Path) -> Result<Vec<(String, u64, u64)>> {
    let mut feed = Feed::whole(name, path)?;
    let file_len = feed.remaining();
    feed.take(9, "file header")?;
    let at = feed.offset();
    let count = feed.scalar(Scalar::U4, "number of components")?;
    if count.saturating_mul(18) > feed.remaining() {
        return Err(feed.error_at(at, format!("{count} components cannot fit in the file")));
    }
    let mut entries: Vec<(String, u64, u64)> = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let at = feed.offset();
        let n = feed.scalar(Scalar::U2, "component name length")? as usize;
        let text = String::from_utf8_lossy(feed.take(n, "component name")?).into_owned();
        let start = feed.scalar(Scalar::U8, "component offset")?;
        let len = feed.scalar(Scalar::U8, "component length")?;
        let inside = start.checked_add(len).is_some_and(|e| e <= file_len);
        let overlaps = entries
            .iter()
            .any(|(_, s, l)| start < s + l && *s < start + len);
        if !inside || overlaps || entries.iter().any(|(t, _, _)| *t == text) {
            return Err(feed.error_at(
                at,
                format!("component `{text}` at {start}+{len} overlaps, repeats or leaves the file"),
            ));
        }
        entries.push((text, start, len));
    }
    Ok(entries)
}
