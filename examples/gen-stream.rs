//! Writes a large synthetic record stream for benchmarks:
//! `cargo run --release --example gen-stream -- ROWS [--json] > big.tsv`.
//!
//! The mix resembles an MPI trace: per-thread nested enter/leave, message halves,
//! counters with attributes, and instant events, in completion-time order.

use std::io::Write;

use tracepipe::formats::stream::{jsonl::JsonlWriter, tsv::TsvWriter};
use tracepipe::io::Output;
use tracepipe::model::record::{Kind, Record};
use tracepipe::pipe::{RecordSink, WriteOptions};
use tracepipe::Symbols;

const FUNCTIONS: [&str; 6] = [
    "main",
    "solve",
    "MPI_Send",
    "MPI_Recv",
    "compute_flux",
    "io_write",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: u64 = args
        .first()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let json = args.iter().any(|a| a == "--json");
    let out = Output::new("<stdout>", Box::new(std::io::stdout()));
    let symbols = Symbols::new();
    let sym = |text: &str| symbols.intern(text);
    let opts = WriteOptions {
        symbols: symbols.clone(),
        ..WriteOptions::default()
    };
    let mut sink: Box<dyn RecordSink> = if json {
        Box::new(JsonlWriter::new(out, &opts))
    } else {
        Box::new(TsvWriter::new(out, &opts))
    };
    let threads = 16usize;
    let mut rec = Record::new(Kind::Container);
    rec.loc = sym("node0");
    rec.cat = sym("node");
    sink.write(&rec)?;
    for t in 0..threads {
        rec.clear();
        rec.kind = Kind::Container;
        rec.time = Some(0);
        rec.loc = sym(&format!("rank{t}"));
        rec.cat = sym("process");
        rec.name = sym(&format!("MPI rank {t}"));
        rec.peer = sym("node0");
        sink.write(&rec)?;
    }
    let (user, world) = (sym("USER"), sym("MPI_COMM_WORLD"));
    let functions = FUNCTIONS.map(sym);
    let (instructions, iteration) = (sym("PAPI_TOT_INS"), sym("iteration"));
    let mut depth = vec![0usize; threads];
    let mut state: u64 = 0x2545f4914f6cdd1d;
    let mut time: i64 = 1_000;
    let mut written = 0u64;
    let locs: Vec<_> = (0..threads).map(|t| sym(&format!("rank{t}"))).collect();
    let mut in_flight: std::collections::VecDeque<(usize, usize, i64, u64)> = Default::default();
    while written < rows {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        time += (state % 997) as i64;
        let t = (state >> 20) as usize % threads;
        rec.clear();
        rec.time = Some(time);
        rec.loc = locs[t];
        match (state >> 32) % 10 {
            0..=3 if depth[t] < 6 => {
                rec.kind = Kind::Enter;
                rec.cat = user;
                rec.name = functions[depth[t]];
                rec.depth = Some(depth[t] as u32);
                depth[t] += 1;
            }
            0..=5 if depth[t] > 0 => {
                depth[t] -= 1;
                rec.kind = Kind::Leave;
                rec.cat = user;
                rec.name = functions[depth[t]];
                rec.depth = Some(depth[t] as u32);
            }
            6 | 7 => {
                // A send to the next rank, or the receive of the oldest
                // message in flight: halves that pair, as a real trace's.
                rec.comm = world;
                let delivered = if state & 1 == 1 {
                    in_flight.pop_front()
                } else {
                    None
                };
                match delivered {
                    Some((sender, receiver, tag, size)) => {
                        rec.kind = Kind::Recv;
                        rec.loc = locs[receiver];
                        rec.peer = locs[sender];
                        rec.tag = Some(tag);
                        rec.size = Some(size);
                    }
                    None => {
                        let receiver = (t + 1) % threads;
                        let (tag, size) = ((state % 64) as i64, state % 65536);
                        rec.kind = Kind::Send;
                        rec.peer = locs[receiver];
                        rec.tag = Some(tag);
                        rec.size = Some(size);
                        in_flight.push_back((t, receiver, tag, size));
                    }
                }
            }
            8 => {
                rec.kind = Kind::Counter;
                rec.name = instructions;
                rec.value = (state % 1_000_000_007).to_string();
                rec.push_attr("mode", "acc");
            }
            _ => {
                rec.kind = Kind::Event;
                rec.name = iteration;
                rec.value = (written / 1000).to_string();
                rec.push_attr("file", "solver.c");
            }
        }
        sink.write(&rec)?;
        written += 1;
    }
    sink.finish()?;
    std::io::stdout().flush()?;
    Ok(())
}
