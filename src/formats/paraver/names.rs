//! The names beside a `.prv`: the `.pcf` (states, event types and their
//! values) and the `.row` (the names of each level's rows).

use crate::fasthash::FastMap;

/// An event type the `.pcf` declares: its label and its values' labels.
#[derive(Debug, Default, Clone)]
pub struct PcfType {
    /// The type's label.
    pub label: String,
    /// Labels of its values.
    pub values: FastMap<i128, String>,
}

/// What the rows of an event type become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeRole {
    /// A call stack: a value other than 0 enters its frame, 0 leaves it.
    Stack,
    /// Named values, each an `event`.
    Enumeration,
    /// A quantity (a hardware counter, a size): a `counter`.
    Quantity,
}

impl PcfType {
    /// What the type's rows become: a type whose values name 0 (`End`,
    /// `Outside MPI`) is a call stack, except Extrae's callers and
    /// source lines (types 70 000 000 to 89 999 999, and labels ending
    /// `line and file`), which repeat a function type's value; a type
    /// with other named values is an enumeration; one with none, a
    /// quantity.
    pub fn role(&self, number: u64) -> TypeRole {
        let repeats = (70_000_000..90_000_000).contains(&number)
            || self.label.trim_end().ends_with("line and file");
        match (self.values.is_empty(), self.values.contains_key(&0)) {
            (true, _) => TypeRole::Quantity,
            (false, true) if !repeats => TypeRole::Stack,
            _ => TypeRole::Enumeration,
        }
    }
}

/// The `.pcf`: what its states and event types are called.
#[derive(Debug, Default)]
pub struct Pcf {
    /// State labels by number.
    pub states: FastMap<u64, String>,
    /// Event types by number.
    pub types: FastMap<u64, PcfType>,
}

/// The section of a `.pcf` being read.
#[derive(PartialEq)]
enum Section {
    States,
    Types,
    Values,
    Other,
}

/// A whole number of a Paraver file (a time, an identifier, a type): the
/// integer parser of the stream first, `str::parse` for what it leaves
/// (a leading `+` or `0`).
pub fn parse_whole(text: &str) -> Option<u64> {
    crate::number::parse_uint(text.as_bytes()).or_else(|| text.parse().ok())
}

/// An integer of a Paraver file: values are 64-bit, signed or not.
pub fn parse_value(text: &str) -> Option<i128> {
    // The fast parser alone: the general parse below takes the rest.
    if let Some(v) = crate::number::parse_uint(text.as_bytes()) {
        return Some(i128::from(v));
    }
    let v: i128 = text.parse().ok()?;
    (i128::from(i64::MIN)..=i128::from(u64::MAX))
        .contains(&v)
        .then_some(v)
}

/// `NUMBER LABEL...` split at the first run of blanks.
fn numbered(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    let at = line.find(char::is_whitespace)?;
    Some((&line[..at], line[at..].trim()))
}

impl Pcf {
    /// Reads a `.pcf`'s text; `Err` names the line (from 1) and what was
    /// expected.
    pub fn parse(text: &str) -> Result<Pcf, (u64, String)> {
        let mut pcf = Pcf::default();
        let mut section = Section::Other;
        // The types of the EVENT_TYPE block being read.
        let mut block: Vec<u64> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let at = n as u64 + 1;
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if trimmed.starts_with(|c: char| c.is_ascii_uppercase()) {
                section = match trimmed {
                    "STATES" => Section::States,
                    "EVENT_TYPE" => {
                        block.clear();
                        Section::Types
                    }
                    "VALUES" if section == Section::Types => Section::Values,
                    "VALUES" => return Err((at, "VALUES outside an EVENT_TYPE block".into())),
                    _ => Section::Other,
                };
                continue;
            }
            match section {
                Section::States => {
                    let (number, label) = numbered(trimmed).unwrap_or((trimmed, ""));
                    let number = number
                        .parse()
                        .map_err(|_| (at, format!("expected a state number, found `{number}`")))?;
                    pcf.states.insert(number, label.to_string());
                }
                Section::Types => {
                    let mut words = trimmed.split_whitespace();
                    let (_gradient, number) = (words.next(), words.next());
                    let number = number.and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| {
                        (
                            at,
                            "expected `GRADIENT TYPE LABEL` for an event type".to_string(),
                        )
                    })?;
                    let (_, label) = numbered(trimmed).unwrap_or_default();
                    let label = numbered(label).map_or("", |(_, l)| l);
                    let entry = pcf.types.entry(number).or_default();
                    entry.label = label.to_string();
                    block.push(number);
                }
                Section::Values => {
                    let (value, label) = numbered(trimmed).unwrap_or((trimmed, ""));
                    let value = parse_value(value)
                        .ok_or_else(|| (at, format!("expected a value, found `{value}`")))?;
                    for number in &block {
                        let entry = pcf.types.entry(*number).or_default();
                        entry.values.insert(value, label.to_string());
                    }
                }
                Section::Other => {}
            }
        }
        Ok(pcf)
    }

    /// A state's label, if the `.pcf` names it.
    pub fn state(&self, number: u64) -> Option<&str> {
        self.states.get(&number).map(String::as_str)
    }
}

/// The `.row`: each level's row names (`LEVEL THREAD SIZE N` and N names).
#[derive(Debug, Default)]
pub struct RowNames {
    levels: FastMap<String, Vec<String>>,
}

impl RowNames {
    /// Reads a `.row`'s text; `Err` names the line and what was expected.
    pub fn parse(text: &str) -> Result<RowNames, (u64, String)> {
        let mut names = RowNames::default();
        let mut lines = text.lines().enumerate();
        while let Some((n, line)) = lines.next() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [] => continue,
                ["LEVEL", level, "SIZE", size] => {
                    let size: usize = size.parse().map_err(|_| {
                        (
                            n as u64 + 1,
                            format!("expected the size of level {level}, found `{size}`"),
                        )
                    })?;
                    let mut rows = Vec::new();
                    for _ in 0..size {
                        match lines.next() {
                            Some((_, name)) => rows.push(name.trim().to_string()),
                            None => break,
                        }
                    }
                    names.levels.insert(level.to_string(), rows);
                }
                _ => {
                    return Err((n as u64 + 1, "expected `LEVEL NAME SIZE N`".into()));
                }
            }
        }
        Ok(names)
    }

    /// The name of row `index` (from 0) of `level` (`NODE`, `THREAD`,
    /// `TASK`, `APPL`, `CPU`), if the `.row` gives one.
    pub fn name(&self, level: &str, index: usize) -> Option<&str> {
        let rows = self.levels.get(level)?;
        rows.get(index)
            .map(String::as_str)
            .filter(|n| !n.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcf_blocks_name_types_and_values() {
        let pcf = Pcf::parse(
            "DEFAULT_OPTIONS\n\nLEVEL THREAD\n\nSTATES\n0    Idle\n1    Running\n\nSTATES_COLOR\n0 {1,2,3}\n\n\
             EVENT_TYPE\n9   50000002    MPI Collective Comm\nVALUES\n7   MPI_Bcast\n0   Outside MPI\n\n\
             EVENT_TYPE\n7  42000050 PAPI_TOT_INS [Instr completed]\n7  42000059 PAPI_TOT_CYC\n\n\
             EVENT_TYPE\n0    80000001    Caller line at level 1\nVALUES\n0   End\n1 0 (Unresolved)\n",
        )
        .unwrap();
        assert_eq!(pcf.state(1), Some("Running"));
        let mpi = &pcf.types[&50000002];
        assert_eq!(
            (mpi.label.as_str(), mpi.values[&7].as_str()),
            ("MPI Collective Comm", "MPI_Bcast")
        );
        assert_eq!(mpi.role(50000002), TypeRole::Stack);
        assert_eq!(pcf.types[&42000050].label, "PAPI_TOT_INS [Instr completed]");
        assert_eq!(pcf.types[&42000059].role(42000059), TypeRole::Quantity);
        assert_eq!(pcf.types[&80000001].role(80000001), TypeRole::Enumeration);
        assert!(Pcf::parse("VALUES\n1 x\n").is_err());
        assert!(Pcf::parse("STATES\nx y\n").is_err());
        let rows = RowNames::parse(
            "LEVEL NODE SIZE 1\nnode-a\n\nLEVEL THREAD SIZE 2\nTHREAD 1.1.1\nmain\n",
        )
        .unwrap();
        assert_eq!(
            (
                rows.name("NODE", 0),
                rows.name("THREAD", 1),
                rows.name("TASK", 0)
            ),
            (Some("node-a"), Some("main"), None)
        );
        assert!(RowNames::parse("garbage\n").is_err());
    }
}
