//! What reports print for the identifiers in their key columns: what the
//! trace calls a location or a type, not the alias the stream keys it by.
//!
//! A Pajé trace (SimGrid's above all) declares containers and types under
//! short aliases (`1`, `16/2`, `S`) and names them separately (`rank-0`,
//! `MPI_STATE`). The stream keeps the aliases, since rows refer to them;
//! a person reading a report wants the names. A location prints as its
//! declared name; where two locations share a name, each prints as the
//! shortest end of its path of names that tells it apart (`host-1/rank-0`,
//! `MPI Rank 3/Master thread`), and where even the whole paths are alike,
//! the path followed by ` [ID]`. A lane (a Pajé state stack) prints as
//! its container. A `cat` that is the id of a declared type prints as the
//! type's name. With `--ids` (`Labels::ids`), every identifier prints as
//! the stream has it, except that a lane still prints as its container's id.

use std::cell::OnceCell;

use crate::fasthash::FastMap;
use crate::model::record::{Kind, Record, Sym};
use crate::model::symbol::{well_known, Symbols};

/// What a key column holds, so its label is found the right way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A location (`loc`, `peer` of a message).
    Loc,
    /// A category that may be a declared type's id (`cat`).
    Type,
    /// Anything else: printed as it is.
    Plain,
}

/// A declared location.
struct Declared {
    name: Sym,
    parent: Sym,
}

/// The labels of a report's identifiers, made from the declarations the
/// sink in front of the report sees ([`Labels::observe`]) and lent to the
/// report when it prints.
pub struct Labels {
    symbols: Symbols,
    ids: bool,
    /// Containers by id (not lanes).
    containers: FastMap<Sym, Declared>,
    /// Each lane's container.
    lanes: FastMap<Sym, Sym>,
    /// Each declared type's name, by the symbol of its id.
    types: FastMap<Sym, Sym>,
    /// The label of each container, made at the first label asked for
    /// after the last declaration.
    resolved: OnceCell<FastMap<Sym, String>>,
}

impl Labels {
    /// Labels of identifiers in `symbols`: names, or the stream's ids when
    /// `ids`.
    pub fn new(symbols: Symbols, ids: bool) -> Labels {
        Labels {
            symbols,
            ids,
            containers: FastMap::default(),
            lanes: FastMap::default(),
            types: FastMap::default(),
            resolved: OnceCell::new(),
        }
    }

    /// The symbol table the labelled identifiers are in.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// Notes what `rec` declares (a container, a lane or a type); other rows
    /// are ignored.
    pub fn observe(&mut self, rec: &Record) {
        match rec.kind {
            Kind::Container if rec.cat == well_known::LANE => {
                self.lanes.insert(rec.loc, rec.peer);
            }
            Kind::Container => {
                self.resolved = OnceCell::new();
                self.containers.insert(
                    rec.loc,
                    Declared {
                        name: rec.name,
                        parent: rec.peer,
                    },
                );
            }
            Kind::Type if !rec.id.is_empty() && !rec.name.is_empty() => {
                let id = self.symbols.intern(&rec.id);
                self.types.insert(id, rec.name);
            }
            _ => {}
        }
    }

    /// The labels of the first `roles.len()` parts of `key`.
    pub fn texts(&self, key: &[Sym], roles: &[Role]) -> Vec<String> {
        key.iter()
            .zip(roles)
            .map(|(&sym, &role)| self.label(sym, role))
            .collect()
    }

    fn label(&self, sym: Sym, role: Role) -> String {
        match role {
            Role::Loc => {
                let owner = self.lanes.get(&sym).copied().unwrap_or(sym);
                let resolved = (!self.ids).then(|| {
                    self.resolved
                        .get_or_init(|| resolve(&self.containers, &self.symbols))
                });
                match resolved.and_then(|r| r.get(&owner)) {
                    Some(label) => label.clone(),
                    None => self.symbols.text(owner).to_string(),
                }
            }
            Role::Type if !self.ids => {
                let name = self.types.get(&sym).copied().unwrap_or(sym);
                self.symbols.text(name).to_string()
            }
            Role::Type | Role::Plain => self.symbols.text(sym).to_string(),
        }
    }
}

/// Each container's label: its name where no other container has it, else
/// the shortest end of its path of names that no other label has
/// (`MPI Rank 3/Master thread`, not the whole `machine/node/MPI Rank
/// 3/Master thread`), else its whole path and its id.
fn resolve(containers: &FastMap<Sym, Declared>, symbols: &Symbols) -> FastMap<Sym, String> {
    let name = |id: Sym| -> String {
        let declared = containers.get(&id).map_or(id, |c| c.name);
        match declared.is_empty() {
            true => symbols.text(id).to_string(),
            false => symbols.text(declared).to_string(),
        }
    };
    let mut labels: FastMap<Sym, String> = containers.keys().map(|&id| (id, name(id))).collect();
    // Names from the container up to its root.
    let path = |id: Sym| -> Vec<String> {
        let mut parts = vec![name(id)];
        let mut at = id;
        // Bounded by the containers, so a cycle of parents cannot loop.
        for _ in 0..containers.len() {
            match containers.get(&at) {
                Some(c) if !c.parent.is_empty() && containers.contains_key(&c.parent) => {
                    at = c.parent;
                    parts.push(name(at));
                }
                _ => break,
            }
        }
        parts
    };
    let end_of = |parts: &[String], k: usize| -> String {
        let mut end: Vec<&str> = parts.iter().take(k).map(String::as_str).collect();
        end.reverse();
        end.join("/")
    };
    let mut pending: Vec<(Sym, Vec<String>)> = repeated(&labels)
        .into_iter()
        .map(|id| (id, path(id)))
        .collect();
    let longest = pending.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
    for k in 2..=longest {
        for (id, parts) in &pending {
            labels.insert(*id, end_of(parts, k));
        }
        let still = repeated(&labels);
        pending.retain(|(id, _)| still.contains(id));
    }
    for (id, parts) in pending {
        let whole = end_of(&parts, parts.len());
        labels.insert(id, format!("{whole} [{}]", symbols.text(id)));
    }
    labels
}

/// The containers whose label another container has too.
fn repeated(labels: &FastMap<Sym, String>) -> Vec<Sym> {
    let mut uses: FastMap<&str, u32> = FastMap::default();
    for label in labels.values() {
        *uses.entry(label.as_str()).or_default() += 1;
    }
    labels
        .iter()
        .filter(|(_, label)| uses[label.as_str()] > 1)
        .map(|(&id, _)| id)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(symbols: &Symbols, id: &str, name: &str, parent: &str) -> Record {
        let mut rec = Record::new(Kind::Container);
        rec.loc = symbols.intern(id);
        rec.name = symbols.intern(name);
        rec.peer = symbols.intern(parent);
        rec
    }

    #[test]
    fn names_then_paths_then_ids() {
        let symbols = Symbols::new();
        let mut labels = Labels::new(symbols.clone(), false);
        for (id, name, parent) in [
            ("m", "machine", ""),
            ("h1", "host", "m"),
            ("h2", "host-2", "m"),
            ("1", "rank-0", "h1"),
            ("2", "rank-0", "h2"),
            ("6", "t", "1"),
            ("7", "t", "2"),
            ("3", "9", "h1"),
            ("9", "rank-1", "h1"),
            ("4", "twin", "h1"),
            ("5", "twin", "h1"),
        ] {
            labels.observe(&container(&symbols, id, name, parent));
        }
        let mut lane = container(&symbols, "9/2", "MPI_STATE", "9");
        lane.cat = well_known::LANE;
        labels.observe(&lane);
        let key: Vec<Sym> = ["1", "2", "3", "9", "9/2", "4", "5", "undeclared", "6", "7"]
            .iter()
            .map(|t| symbols.intern(t))
            .collect();
        let roles = [Role::Loc; 10];
        // Names; where they repeat, the shortest end of the path that does
        // not (`rank-0/t`, not `machine/host/rank-0/t`); else the path and
        // the id.
        assert_eq!(
            labels.texts(&key, &roles),
            [
                "host/rank-0",
                "host-2/rank-0",
                "9",
                "rank-1",
                "rank-1",
                "machine/host/twin [4]",
                "machine/host/twin [5]",
                "undeclared",
                "host/rank-0/t",
                "host-2/rank-0/t",
            ]
        );
        let mut ids = Labels::new(symbols.clone(), true);
        ids.observe(&lane);
        assert_eq!(ids.texts(&key[3..5], &roles[..2]), ["9", "9"]);
    }

    #[test]
    fn a_type_id_prints_as_its_name() {
        let symbols = Symbols::new();
        let mut labels = Labels::new(symbols.clone(), false);
        let mut ty = Record::new(Kind::Type);
        ty.id = "S".into();
        ty.name = symbols.intern("MPI_STATE");
        labels.observe(&ty);
        let key = [symbols.intern("S"), symbols.intern("S")];
        assert_eq!(
            labels.texts(&key, &[Role::Type, Role::Plain]),
            ["MPI_STATE", "S"]
        );
    }
}

/// Orders labels as people number things: runs of digits by their value
/// (`rank 2` before `rank 10`), the rest byte by byte; equal-valued
/// numbers with other spellings (`01`, `1`) by their text.
pub fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (m, n) = (digits(x), digits(y));
                let (u, v) = (trim_zeros(&x[..m]), trim_zeros(&y[..n]));
                let by_value = u.len().cmp(&v.len()).then_with(|| u.cmp(v));
                if by_value.is_ne() {
                    return by_value;
                }
                (x, y) = (&x[m..], &y[n..]);
            }
            (Some(p), Some(q)) if p != q => return p.cmp(q),
            _ => (x, y) = (&x[1..], &y[1..]),
        }
    }
}

fn digits(s: &[u8]) -> usize {
    s.iter().take_while(|c| c.is_ascii_digit()).count()
}

fn trim_zeros(s: &[u8]) -> &[u8] {
    let zeros = s.iter().take_while(|&&c| c == b'0').count();
    &s[zeros..]
}

#[cfg(test)]
mod natural_tests {
    use super::natural_order;

    #[test]
    fn numbers_order_by_value() {
        let mut names = vec![
            "rank 10", "rank 2", "rank 1", "host", "rank 02", "a9b", "a10",
        ];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            names,
            ["a9b", "a10", "host", "rank 1", "rank 02", "rank 2", "rank 10"]
        );
    }
}
