//! Writes a large synthetic Pajé trace for benchmarks:
//! `cargo run --release --example gen-paje -- MEGABYTES [wide] > big.paje`.
//!
//! The default shape: 4 machines × 16 threads, nested push/pop and set
//! states, variables with set/add/sub, keyed links between threads, events,
//! aliases and a user field; globally time-ordered like tracer output.
//!
//! `wide`: 32 nodes × 16 ranks (544 containers), short lines (short names,
//! millisecond times), and user fields on pushes and links (a push carries
//! a tag and a byte count, a link's two ends a tag each), as traces of
//! MPI programs converted for ViTE look.

use std::io::{BufWriter, Write};

const HEADER: &str = include_str!("../tests/data/paje/header.paje");

fn main() -> std::io::Result<()> {
    let megabytes: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("MEGABYTES is a number"))
        .unwrap_or(500);
    let target = megabytes * 1_000_000;
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    if std::env::args().nth(2).as_deref() == Some("wide") {
        wide(target, &mut out)?;
        return out.flush();
    }
    let written = std::cell::Cell::new(0u64);
    let put = |out: &mut BufWriter<_>, s: &str| -> std::io::Result<()> {
        written.set(written.get() + s.len() as u64);
        out.write_all(s.as_bytes())
    };
    put(&mut out, HEADER)?;
    put(&mut out, "0 MA 0 Machine\n0 TH MA Thread\n2 ST TH \"Thread State\"\n1 MEM MA Memory \"1 0 0\"\n3 MK TH Marker\n4 MSG MA TH TH Message\n")?;
    let states = ["compute", "MPI_Send", "MPI_Recv", "MPI_Wait", "io", "idle"];
    for (i, s) in states.iter().enumerate() {
        put(&mut out, &format!("5 s{i} ST {s} \"0.{i} 0.5 0.5\"\n"))?;
    }
    let (machines, threads) = (4usize, 16usize);
    for m in 0..machines {
        put(&mut out, &format!("6 0 m{m} MA 0 \"machine {m}\"\n"))?;
        put(&mut out, &format!("8 0 m{m} MEM 0\n"))?;
        for t in 0..threads {
            put(
                &mut out,
                &format!("6 0 t{m}_{t} TH m{m} \"thread {m}.{t}\"\n"),
            )?;
        }
    }
    let n = machines * threads;
    let mut depth = vec![0usize; n];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut time_us: u64 = 1_000;
    let mut key = 0u64;
    let mut pending: Vec<(usize, u64)> = Vec::new();
    let mut line = String::with_capacity(128);
    while written.get() < target {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        time_us += 1 + state % 50;
        let th = (state >> 8) as usize % n;
        let (m, t) = (th / threads, th % threads);
        let secs = format!("{}.{:06}", time_us / 1_000_000, time_us % 1_000_000);
        line.clear();
        match (state >> 32) % 16 {
            0..=4 if depth[th] < 5 => {
                let v = (state >> 40) as usize % states.len();
                line.push_str(&format!(
                    "12 {secs} t{m}_{t} ST s{v} it{}\n",
                    (state >> 20) % 1000
                ));
                depth[th] += 1;
            }
            0..=7 if depth[th] > 0 => {
                line.push_str(&format!("13 {secs} t{m}_{t} ST\n"));
                depth[th] -= 1;
            }
            8 if depth[th] == 0 => {
                line.push_str(&format!("11 {secs} t{m}_{t} ST s0\n"));
                depth[th] = 1;
            }
            9 => line.push_str(&format!("9 {secs} m{m} MEM {}.5\n", state % 4096)),
            10 => line.push_str(&format!("10 {secs} m{m} MEM {}.25\n", state % 1024)),
            11 => line.push_str(&format!("8 {secs} m{m} MEM {}\n", state % 100_000)),
            12 | 13 if pending.len() < 64 => {
                key += 1;
                line.push_str(&format!(
                    "15 {secs} m{m} MSG t{m}_{t} msg k{key} {}\n",
                    state % 65536
                ));
                pending.push((m, key));
            }
            12..=14 if !pending.is_empty() => {
                let (pm, k) = pending.remove(0);
                let dest = (state >> 24) as usize % threads;
                line.push_str(&format!("16 {secs} m{pm} MSG t{pm}_{dest} msg k{k}\n"));
            }
            _ => line.push_str(&format!("17 {secs} t{m}_{t} MK \"mark {}\"\n", state % 97)),
        }
        put(&mut out, &line)?;
    }
    for (m, k) in pending {
        time_us += 1;
        put(
            &mut out,
            &format!(
                "16 {}.{:06} m{m} MSG t{m}_0 msg k{k}\n",
                time_us / 1_000_000,
                time_us % 1_000_000
            ),
        )?;
    }
    out.flush()
}

/// Event definitions with user fields, after the standard ones.
const WIDE_DEFS: &str = "%EventDef PajePushState 18
% Time date
% Container string
% Type string
% Value string
% Tag string
% Bytes int
%EndEventDef
%EventDef PajeStartLink 19
% Time date
% Container string
% Type string
% StartContainer string
% Value string
% Key string
% Tag string
%EndEventDef
%EventDef PajeEndLink 20
% Time date
% Container string
% Type string
% EndContainer string
% Value string
% Key string
% Tag string
%EndEventDef
";

/// The `wide` shape: many containers, short lines, user fields.
fn wide(target: u64, out: &mut impl Write) -> std::io::Result<()> {
    let written = std::cell::Cell::new(0u64);
    let put = |out: &mut dyn Write, s: &str| -> std::io::Result<()> {
        written.set(written.get() + s.len() as u64);
        out.write_all(s.as_bytes())
    };
    put(out, HEADER)?;
    put(out, WIDE_DEFS)?;
    put(
        out,
        "0 N 0 Node\n0 R N Rank\n2 S R State\n1 B N Bytes \"1 0 0\"\n4 L 0 R R Comm\n",
    )?;
    let states = ["run", "send", "recv", "wait", "bar"];
    for (i, s) in states.iter().enumerate() {
        put(out, &format!("5 {s} S {s} \"0.{i} 0.5 0.5\"\n"))?;
    }
    let (nodes, ranks) = (32usize, 16usize);
    for n in 0..nodes {
        put(out, &format!("6 0 n{n} N 0 n{n}\n8 0 n{n} B 0\n"))?;
        for r in 0..ranks {
            put(
                out,
                &format!("6 0 r{} R n{n} r{}\n", n * ranks + r, n * ranks + r),
            )?;
        }
    }
    let count = nodes * ranks;
    let mut depth = vec![0u8; count];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut time_us: u64 = 0;
    let (mut key, mut pending) = (0u64, Vec::new());
    let mut line = String::with_capacity(64);
    while written.get() < target {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        time_us += 1 + state % 8;
        let r = (state >> 8) as usize % count;
        let t = format!("{}.{:03}", time_us / 1000, time_us % 1000);
        line.clear();
        match (state >> 32) % 8 {
            0..=2 if depth[r] < 4 => {
                let v = states[(state >> 40) as usize % states.len()];
                let tag = (state >> 20) % 64;
                line.push_str(&format!("18 {t} r{r} S {v} g{tag} {}\n", state % 4096));
                depth[r] += 1;
            }
            0..=4 if depth[r] > 0 => {
                line.push_str(&format!("13 {t} r{r} S\n"));
                depth[r] -= 1;
            }
            5 if pending.len() < 256 => {
                key += 1;
                line.push_str(&format!("19 {t} 0 L r{r} m {key} g{}\n", state % 16));
                pending.push(key);
            }
            5 | 6 if !pending.is_empty() => {
                let k = pending.swap_remove((state >> 16) as usize % pending.len());
                line.push_str(&format!("20 {t} 0 L r{r} m {k} g{}\n", state % 16));
            }
            _ => line.push_str(&format!("9 {t} n{} B {}\n", r / ranks, state % 512)),
        }
        put(out, &line)?;
    }
    for k in pending {
        time_us += 1;
        let t = format!("{}.{:03}", time_us / 1000, time_us % 1000);
        put(out, &format!("20 {t} 0 L r0 m {k} g0\n"))?;
    }
    Ok(())
}
