//! The `.prv` header line: `#Paraver (DATE):END[_UNIT]:NODES:APPLS` where
//! NODES is `0`, `N` or `N(CPUS,...)`, APPLS is `N:TASKS(...)` repeated,
//! each task `THREADS:NODE`, and a last `,N` counts the communicator lines
//! that follow. Read as Paraver's own reader reads it.

/// Threads a header may declare in all, so a corrupt count is an error
/// rather than millions of container rows.
const MAX_THREADS: u64 = 1 << 20;

/// One task (an MPI rank): its threads and the node it ran on (from 1; 0
/// when the header names no nodes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderTask {
    /// Threads of the task.
    pub threads: u32,
    /// Its node, from 1 (0: none).
    pub node: u32,
}

/// What the header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The date between the parentheses, as written.
    pub date: String,
    /// The trace's end, in its unit.
    pub end: u64,
    /// Nanoseconds per unit: 1 (`_ns`), 1 000 (`_us` or none: Paraver's
    /// default is µs) or 1 000 000 (`_ms`).
    pub ns_per_unit: i64,
    /// CPUs of each node; empty when the header names no nodes.
    pub nodes: Vec<u32>,
    /// Each application's tasks.
    pub applications: Vec<Vec<HeaderTask>>,
    /// Communicator lines that follow the header.
    pub communicators: u32,
}

/// A cursor over the header's text.
struct Fields<'a> {
    rest: &'a str,
}

impl<'a> Fields<'a> {
    /// The text up to `end` (taken with it).
    fn until(&mut self, end: char, what: &str) -> Result<&'a str, String> {
        let at = self
            .rest
            .find(end)
            .ok_or_else(|| format!("expected `{end}` after the {what}"))?;
        let field = &self.rest[..at];
        self.rest = &self.rest[at + end.len_utf8()..];
        Ok(field)
    }

    /// A number up to `end`.
    fn number(&mut self, end: char, what: &str) -> Result<u64, String> {
        let field = self.until(end, what)?;
        parse_number(field, what)
    }
}

fn parse_number(field: &str, what: &str) -> Result<u64, String> {
    field
        .trim()
        .parse()
        .map_err(|_| format!("expected the {what} as a whole number, found `{field}`"))
}

impl Header {
    /// Reads a header line (without its newline).
    pub fn parse(line: &str) -> Result<Header, String> {
        let rest = line
            .strip_prefix("#Paraver")
            .ok_or("expected the Paraver header `#Paraver (DATE):...`")?;
        let rest = rest.trim_start();
        let rest = rest
            .strip_prefix('(')
            .ok_or("expected `(DATE)` after `#Paraver`")?;
        let mut fields = Fields { rest };
        let date = fields.until(')', "date")?.to_string();
        fields.rest = fields
            .rest
            .strip_prefix(':')
            .ok_or("expected `:` after the date")?;
        let (end, ns_per_unit) = end_time(fields.until(':', "end time")?)?;
        let nodes = nodes(&mut fields)?;
        let count = fields.number(':', "number of applications")?;
        if count == 0 {
            return Err("the header declares no application".into());
        }
        let mut applications = Vec::new();
        let mut threads = 0u64;
        for _ in 0..count {
            let tasks = application(&mut fields, nodes.len())?;
            threads += tasks.iter().map(|t| u64::from(t.threads)).sum::<u64>();
            if threads > MAX_THREADS {
                return Err(format!(
                    "the header declares more than {MAX_THREADS} threads"
                ));
            }
            applications.push(tasks);
            // One character between applications (`:` or `,`), as Paraver.
            let mut chars = fields.rest.chars();
            chars.next();
            fields.rest = chars.as_str();
        }
        let communicators = match fields.rest.trim() {
            "" => 0,
            n => u32::try_from(parse_number(n, "number of communicators")?)
                .map_err(|_| "too many communicators")?,
        };
        Ok(Header {
            date,
            end,
            ns_per_unit,
            nodes,
            applications,
            communicators,
        })
    }

    /// The threads in header order: (application, task, thread), from 1,
    /// and the task's node.
    pub fn threads(&self) -> impl Iterator<Item = ([u32; 3], u32)> + '_ {
        self.applications.iter().enumerate().flat_map(|(a, tasks)| {
            tasks.iter().enumerate().flat_map(move |(t, task)| {
                (0..task.threads).map(move |th| ([a as u32 + 1, t as u32 + 1, th + 1], task.node))
            })
        })
    }

    /// The time unit's name in the stream's `time_unit` meta row.
    pub fn unit_name(&self) -> &'static str {
        match self.ns_per_unit {
            1 => "ns",
            1_000 => "us",
            _ => "ms",
        }
    }
}

/// `END`, `END_ns`, `END_us` or `END_ms`.
fn end_time(field: &str) -> Result<(u64, i64), String> {
    let (number, unit) = field.split_once('_').unwrap_or((field, "us"));
    let ns_per_unit = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        other => {
            return Err(format!(
                "unknown time unit `_{other}` (expected _ns, _us or _ms)"
            ))
        }
    };
    Ok((parse_number(number, "end time")?, ns_per_unit))
}

/// `0:`, `N:` (a CPU each) or `N(CPUS,...):`.
fn nodes(fields: &mut Fields) -> Result<Vec<u32>, String> {
    if fields.rest.starts_with('0') {
        fields.until(':', "number of nodes")?;
        return Ok(Vec::new());
    }
    let paren = fields.rest.find('(');
    let colon = fields.rest.find(':');
    if paren.is_none() || paren > colon {
        let count = fields.number(':', "number of nodes")?;
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        if count > fields.rest.len() + 1 {
            return Err(format!("{count} nodes is more than the header holds"));
        }
        return Ok(vec![1; count]);
    }
    let count = fields.number('(', "number of nodes")?;
    let mut cpus = Vec::new();
    for i in 0..count {
        let end = if i + 1 < count { ',' } else { ')' };
        cpus.push(fields.number(end, "CPUs of a node")? as u32);
    }
    fields.rest = fields
        .rest
        .strip_prefix(':')
        .ok_or("expected `:` after the nodes")?;
    Ok(cpus)
}

/// `N(THREADS:NODE,...)`.
fn application(fields: &mut Fields, nodes: usize) -> Result<Vec<HeaderTask>, String> {
    let count = fields.number('(', "number of tasks")?;
    if count == 0 {
        return Err("an application declares no task".into());
    }
    let mut tasks = Vec::new();
    for i in 0..count {
        let threads = fields.number(':', "threads of a task")?;
        let end = if i + 1 < count { ',' } else { ')' };
        let node = fields.number(end, "node of a task")?;
        if threads == 0 || threads > MAX_THREADS {
            return Err(format!("a task with {threads} threads"));
        }
        if node > u64::from(u32::MAX) || (nodes > 0 && node > nodes as u64) {
            return Err(format!("a task on node {node} of {nodes}"));
        }
        tasks.push(HeaderTask {
            threads: threads as u32,
            node: node as u32,
        });
    }
    Ok(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_read_as_paraver_reads_them() {
        let h = Header::parse("#Paraver (20/04/2016 at 11:15):5834977_ns:1(2):1:1(2:1),0").unwrap();
        assert_eq!(
            (h.end, h.ns_per_unit, h.nodes.clone()),
            (5834977, 1, vec![2])
        );
        assert_eq!(
            h.applications,
            vec![vec![HeaderTask {
                threads: 2,
                node: 1
            }]]
        );
        assert_eq!(h.communicators, 0);
        let h =
            Header::parse("#Paraver (01/01/2020 at 10:00):900:0:2:2(1:0,2:0):1(1:0),3").unwrap();
        assert_eq!(
            (h.ns_per_unit, h.nodes.len(), h.communicators),
            (1_000, 0, 3)
        );
        assert_eq!(h.threads().count(), 4);
        assert_eq!(h.threads().last(), Some(([2, 1, 1], 0)));
        let h = Header::parse("#Paraver (x):10_ms:2:1:1(1:2)").unwrap();
        assert_eq!(
            (h.ns_per_unit, h.nodes.clone(), h.communicators),
            (1_000_000, vec![1, 1], 0)
        );
        for bad in [
            "#Paraver (x):10_s:0:1:1(1:0)",
            "#Paraver (x):10:0:0:",
            "#Paraver (x):10:0:1:1(0:0)",
            "#Paraver (x):10:1(4):1:1(1:2)",
            "#Paraver (x):10:0:1:1(1:9999999999)",
            "#Paraver x",
        ] {
            assert!(Header::parse(bad).is_err(), "{bad}");
        }
    }
}
