//! The `calltree` report: the calling-context tree. One row per call path
//! from the root (the names of the frames around a frame, outermost first,
//! and its own), with the frames' count, inclusive time (their durations)
//! and exclusive time (less their direct children's), summed over the
//! locations (or per location). Recursion stays a path (`f;f;f`), so each
//! path's inclusive time counts each frame once; a function's exclusive
//! times summed over its paths equal `profile`'s.
//!
//! Frames follow `profile`'s rules ([`calls`](super::calls)). A `state`
//! row's parent comes after it (rows come in completion order): its path
//! below its depth is kept per location and depth until the parent comes
//! (a `state` whose parent never comes is a root). Memory: one node per
//! path, whatever the trace's length.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::fasthash::FastMap;
use crate::model::record::{Record, Sym};
use crate::model::symbol::Symbols;
use crate::pipe::{Reads, RecordSink};
use crate::stats::calls::{Call, CallSink, Calls, From};
use crate::stats::labels::{Labels, Role};
use crate::stats::partial::PartialRow;
use crate::stats::{add_to, Report, Style, FRAME_READS};
use crate::table::{Cell, TableWriter};

/// The keys of `--by`.
pub const KEYS: [&str; 2] = ["path", "loc,path"];

/// One path's figures.
#[derive(Debug, Default, Clone, Copy)]
struct Figures {
    count: u64,
    inclusive: i128,
    exclusive: i128,
}

impl Figures {
    fn add(&mut self, other: &Figures) -> std::result::Result<(), String> {
        add_to(&mut self.count, other.count, "count")?;
        add_to(&mut self.inclusive, other.inclusive, "inclusive time")?;
        add_to(&mut self.exclusive, other.exclusive, "exclusive time")
    }

    fn of(call: &Call<'_, u32>) -> Figures {
        Figures {
            count: 1,
            inclusive: call.duration.into(),
            exclusive: call.exclusive.into(),
        }
    }
}

/// A node: a path, as its last name below its parent's path.
struct PathNode {
    parent: u32,
    name: Sym,
    figures: Figures,
}

/// The node that parents the roots (and, per location, their roots).
const TOP: u32 = 0;

/// The tree of paths.
struct Tree {
    per_location: bool,
    nodes: Vec<PathNode>,
    children: FastMap<(u32, Sym), u32>,
    /// Per location, per depth, the paths (below that depth) of the
    /// `state` rows whose parent has not come yet.
    waiting: FastMap<Sym, Vec<FastMap<Vec<Sym>, Figures>>>,
}

impl Tree {
    fn new(per_location: bool) -> Tree {
        let top = PathNode {
            parent: TOP,
            name: Sym::EMPTY,
            figures: Figures::default(),
        };
        Tree {
            per_location,
            nodes: vec![top],
            children: FastMap::default(),
            waiting: FastMap::default(),
        }
    }

    fn child(&mut self, parent: u32, name: Sym) -> u32 {
        let next = self.nodes.len() as u32;
        let node = *self.children.entry((parent, name)).or_insert(next);
        if node == next {
            self.nodes.push(PathNode {
                parent,
                name,
                figures: Figures::default(),
            });
        }
        node
    }

    /// Where `loc`'s outermost frames hang.
    fn root(&mut self, loc: Sym) -> u32 {
        match self.per_location {
            true => self.child(TOP, loc),
            false => TOP,
        }
    }

    /// The node of `path` below `from`.
    fn descend(&mut self, from: u32, path: &[Sym]) -> u32 {
        path.iter().fold(from, |node, &name| self.child(node, name))
    }

    fn add(&mut self, node: u32, figures: &Figures) -> Result<()> {
        self.nodes[node as usize]
            .figures
            .add(figures)
            .map_err(Error::Record)
    }

    /// A `state` row: a root at depth 0 (or without a depth), else kept
    /// with the paths below it until its parent comes.
    fn state(&mut self, rec: &Record, figures: Figures) -> Result<()> {
        let depth = rec.depth.map_or(0, |d| d as usize);
        let waiting = self.waiting.entry(rec.loc).or_default();
        if waiting.len() < depth + 2 {
            waiting.resize_with(depth + 2, FastMap::default);
        }
        let below = match rec.depth {
            Some(_) => std::mem::take(&mut waiting[depth + 1]),
            None => FastMap::default(),
        };
        if depth > 0 {
            let here = &mut waiting[depth];
            here.entry(vec![rec.name])
                .or_default()
                .add(&figures)
                .map_err(Error::Record)?;
            for (path, f) in below {
                let mut whole = Vec::with_capacity(path.len() + 1);
                whole.push(rec.name);
                whole.extend(path);
                here.entry(whole)
                    .or_default()
                    .add(&f)
                    .map_err(Error::Record)?;
            }
            return Ok(());
        }
        let root = self.root(rec.loc);
        let node = self.child(root, rec.name);
        self.add(node, &figures)?;
        for (path, f) in below {
            let at = self.descend(node, &path);
            self.add(at, &f)?;
        }
        Ok(())
    }

    /// The `state` rows whose parent never came, as roots.
    fn settle(&mut self) -> Result<()> {
        for (loc, depths) in std::mem::take(&mut self.waiting) {
            let root = self.root(loc);
            for (path, f) in depths.into_iter().flatten() {
                let at = self.descend(root, &path);
                self.add(at, &f)?;
            }
        }
        Ok(())
    }

    /// A node's location (per location) and path of names, outermost first.
    fn path(&self, mut node: u32) -> (Sym, Vec<Sym>) {
        let mut names = Vec::new();
        while node != TOP {
            let n = &self.nodes[node as usize];
            names.push(n.name);
            node = n.parent;
        }
        names.reverse();
        match self.per_location {
            true => (names[0], names[1..].to_vec()),
            false => (Sym::EMPTY, names),
        }
    }
}

impl CallSink for Tree {
    type Tag = u32;

    fn open(&mut self, rec: &Record, parent: Option<&u32>) -> u32 {
        let parent = match parent {
            Some(&node) => node,
            None => self.root(rec.loc),
        };
        self.child(parent, rec.name)
    }

    fn close(&mut self, call: &Call<'_, u32>) -> Result<()> {
        match call.from {
            From::Frame(&node) => self.add(node, &Figures::of(call)),
            From::State(rec) => self.state(rec, Figures::of(call)),
        }
    }
}

/// How `calltree` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A row per path: count, inclusive, exclusive.
    Rows,
    /// Folded stacks: `path exclusive-ns`, paths with exclusive time only.
    Folded,
    /// The folded stacks drawn as a flame graph (SVG).
    Svg,
}

/// The `calltree` report.
pub struct CallTree {
    symbols: Symbols,
    form: Form,
    calls: Calls<u32>,
    tree: Tree,
}

impl CallTree {
    /// The tree of rows whose identifiers are in `symbols`, summed over
    /// the locations or `per_location`.
    pub fn new(per_location: bool, form: Form, symbols: Symbols) -> CallTree {
        CallTree {
            calls: Calls::new(symbols.clone()),
            symbols,
            form,
            tree: Tree::new(per_location),
        }
    }

    /// The rows as printed: per location label (empty when summed) and path
    /// text, in tree order (paths that print alike merged).
    fn rows(&self, labels: &Labels) -> Result<Rows> {
        let mut rows: BTreeMap<(String, Vec<String>), Figures> = BTreeMap::new();
        for node in 1..self.tree.nodes.len() as u32 {
            let n = &self.tree.nodes[node as usize];
            if n.figures.count == 0 && n.figures.inclusive == 0 {
                continue;
            }
            let (loc, path) = self.tree.path(node);
            let loc = match self.tree.per_location {
                true => labels.texts(&[loc], &[Role::Loc]).remove(0),
                false => String::new(),
            };
            let path = path.iter().map(|&s| self.symbols.text(s).to_string());
            let row = rows.entry((loc, path.collect())).or_default();
            row.add(&n.figures).map_err(Error::Record)?;
        }
        Ok(rows)
    }
}

impl CallTree {
    /// The rows to print: every path, or the `top` with the most
    /// inclusive time, in tree order.
    fn printed(&self, top: Option<usize>, labels: &Labels) -> Result<Rows> {
        let mut rows = self.rows(labels)?;
        if let Some(n) = top {
            let mut by_time: Vec<_> = rows.iter().map(|(k, f)| (f.inclusive, k.clone())).collect();
            by_time.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            for (_, key) in by_time.into_iter().skip(n) {
                rows.remove(&key);
            }
        }
        Ok(rows)
    }

    fn print_rows(&self, rows: Rows, table: &mut TableWriter, style: &Style) -> Result<()> {
        for ((loc, names), f) in rows {
            let path = join_path(&names);
            let mut cells = Vec::with_capacity(6);
            if self.tree.per_location {
                cells.push(Cell::Text(&loc));
            }
            cells.extend([
                Cell::Text(&path),
                Cell::UInt(names.len() as u64 - 1),
                Cell::UInt(f.count),
                style.total(f.inclusive),
                style.total(f.exclusive),
            ]);
            table.row(&cells)?;
        }
        Ok(())
    }

    /// The folded stacks of `rows`: each path with exclusive time (per
    /// location: the location as the outermost frame) and that time.
    fn folded(&self, rows: Rows) -> Vec<(String, i128)> {
        let with_time = rows.into_iter().filter(|(_, f)| f.exclusive != 0);
        let folded = with_time.map(|((loc, names), f)| {
            let path = match self.tree.per_location {
                true => join_path(&[loc]) + ";" + &join_path(&names),
                false => join_path(&names),
            };
            (path, f.exclusive)
        });
        folded.collect()
    }
}

/// The printed rows: per location label (empty when summed) and path,
/// the path's figures, in tree order.
type Rows = BTreeMap<(String, Vec<String>), Figures>;

/// A flame graph of folded-stack `lines` (`PATH NS`) as a self-contained
/// SVG, drawn by `inferno` (the Rust port of flamegraph.pl): one box per
/// path, as wide as its inclusive time, each function's name and time
/// in its title; colours from the names, so a trace gives one picture.
fn flame_graph(lines: &[String]) -> Result<Vec<u8>> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = "trace-stat calltree".to_string();
    options.count_name = "ns".to_string();
    options.deterministic = true;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| Error::Record(format!("flame graph: {e}")))?;
    Ok(svg)
}

/// `names` joined by `;`, a `;` or `\` inside a name written `\;`, `\\`,
/// a line feed, carriage return or tab `\n`, `\r`, `\t`: one line that
/// splits back into the names ([`split_path`]).
pub fn join_path(names: &[String]) -> String {
    let mut text = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            text.push(';');
        }
        for c in name.chars() {
            match c {
                ';' | '\\' => text.extend(['\\', c]),
                '\n' => text.push_str("\\n"),
                '\r' => text.push_str("\\r"),
                '\t' => text.push_str("\\t"),
                c => text.push(c),
            }
        }
    }
    text
}

/// The names of a path [`join_path`] wrote; `None` for a lone `\` at the end
/// or a `\` before anything but `;`, `\`, `n`, `r` and `t`.
pub fn split_path(text: &str) -> Option<Vec<String>> {
    let (mut names, mut name) = (Vec::new(), String::new());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                e @ (';' | '\\') => name.push(e),
                'n' => name.push('\n'),
                'r' => name.push('\r'),
                't' => name.push('\t'),
                _ => return None,
            },
            ';' => names.push(std::mem::take(&mut name)),
            c => name.push(c),
        }
    }
    names.push(name);
    Some(names)
}

impl RecordSink for CallTree {
    fn reads(&self) -> Reads {
        FRAME_READS
    }

    fn write(&mut self, rec: &Record) -> Result<()> {
        self.calls.write(rec, &mut self.tree)
    }

    fn finish(&mut self) -> Result<()> {
        self.calls.finish(&mut self.tree)?;
        self.tree.settle()
    }
}

impl Report for CallTree {
    fn columns(&self, _: &Labels) -> Vec<String> {
        let columns: &[&str] = match (self.form, self.tree.per_location) {
            (Form::Folded | Form::Svg, _) => &["path", "exclusive"],
            (Form::Rows, false) => &["path", "depth", "count", "inclusive", "exclusive"],
            (Form::Rows, true) => &["loc", "path", "depth", "count", "inclusive", "exclusive"],
        };
        columns.iter().map(|c| c.to_string()).collect()
    }

    fn print(&mut self, table: &mut TableWriter, style: &Style, labels: &Labels) -> Result<()> {
        let rows = self.printed(style.top, labels)?;
        match self.form {
            Form::Rows => self.print_rows(rows, table, style),
            Form::Folded => {
                for (path, exclusive) in self.folded(rows) {
                    table.row(&[Cell::Text(&path), style.total(exclusive)])?;
                }
                Ok(())
            }
            Form::Svg => {
                let lines: Vec<String> = self
                    .folded(rows)
                    .into_iter()
                    .map(|(path, exclusive)| format!("{path} {exclusive}"))
                    .collect();
                table.write_raw(&flame_graph(&lines)?)
            }
        }
    }

    fn partial(&self, labels: &Labels) -> Result<Option<Vec<Vec<String>>>> {
        let rows = self.rows(labels)?.into_iter().map(|((loc, names), f)| {
            let mut row = Vec::with_capacity(5);
            if self.tree.per_location {
                row.push(loc);
            }
            row.push(join_path(&names));
            row.extend([f.count as i128, f.inclusive, f.exclusive].map(|n| n.to_string()));
            row
        });
        Ok(Some(rows.collect()))
    }

    fn absorb(&mut self, fields: &[String]) -> std::result::Result<(), String> {
        let k = usize::from(self.tree.per_location);
        let row = PartialRow::new(fields, k + 4)?;
        let figures = Figures {
            count: row.count(k + 1, "count")?,
            inclusive: row.natural(k + 2, "inclusive time")?,
            exclusive: row.natural(k + 3, "exclusive time")?,
        };
        if figures.exclusive > figures.inclusive {
            return Err(format!(
                "exclusive time {} above inclusive time {}",
                figures.exclusive, figures.inclusive
            ));
        }
        let path = split_path(row.text(k))
            .ok_or("a `\\` in the path escapes none of `;`, `\\`, `n`, `r`, `t`")?;
        let path: Vec<Sym> = path.iter().map(|n| self.symbols.intern(n)).collect();
        let from = match self.tree.per_location {
            true => self.tree.root(self.symbols.intern(row.text(0))),
            false => TOP,
        };
        let node = self.tree.descend(from, &path);
        self.tree.nodes[node as usize].figures.add(&figures)
    }
}
