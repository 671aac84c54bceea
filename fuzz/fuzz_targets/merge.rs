//! Partial reports (`trace-stat REPORT --merge`): the input as a partial
//! file of each mergeable report, merged and then printed. Errors at a
//! line, never panics, wrapped sums or a figure from a field that is none.
#![no_main]

mod common;

use common::Buffer;
use libfuzzer_sys::fuzz_target;
use tracepipe::error::Warnings;
use tracepipe::io::Output;
use tracepipe::stats::calltree::{CallTree, Form};
use tracepipe::stats::counters::Counters;
use tracepipe::stats::labels::Labels;
use tracepipe::stats::imbalance::{Imbalance, Kinds};
use tracepipe::stats::messages::{Cells, Messages, View};
use tracepipe::stats::partial::PartialOf;
use tracepipe::stats::profile::{Profile, ProfileKey};
use tracepipe::stats::resources::Resources;
use tracepipe::stats::states::States;
use tracepipe::stats::timeline::messages::MessageTimeline;
use tracepipe::stats::timeline::{Bins, Per, Timeline};
use tracepipe::stats::{Report, Style};
use tracepipe::table::{TableFormat, TableWriter};
use tracepipe::Symbols;

/// The report `name` (with `by`), as `trace-stat` makes it.
fn report(name: &str, by: &str, histogram: Option<usize>, symbols: Symbols) -> Box<dyn Report> {
    match name {
        "profile" => {
            let by = ProfileKey::parse(if by.is_empty() { "name" } else { by }).expect("a key");
            Box::new(Profile::new(by, histogram, symbols))
        }
        "messages" => {
            let view = match (by, histogram) {
                ("comm", _) => View::Comms,
                (_, Some(bins)) => View::Histogram(bins),
                _ => View::Matrix(Cells::Time),
            };
            Box::new(Messages::new(view, symbols))
        }
        "imbalance" => Box::new(Imbalance::new(
            symbols,
            (false, true),
            Kinds::Cpu,
            Warnings::default(),
        )),
        "timeline" => {
            let bins = Bins { origin: 0, width: 7 };
            let per = match by {
                "states" => Per::State,
                "loc" => Per::Loc,
                _ => Per::Name,
            };
            Box::new(Timeline::new(bins, per, histogram.is_some(), Some(3), symbols))
        }
        "timeline-messages" => {
            let bins = Bins { origin: 0, width: 7 };
            Box::new(MessageTimeline::new(bins, by == "pair", None, symbols))
        }
        "calltree" => Box::new(CallTree::new(by == "loc,path", Form::Rows, symbols)),
        "states" => Box::new(States::new(symbols)),
        "counters" => Box::new(Counters::new(symbols, Warnings::default())),
        _ => Box::new(Resources::new(symbols)),
    }
}

fuzz_target!(|data: &[u8]| {
    let histogram = data.first().map(|b| usize::from(b % 4) * 5).filter(|b| *b > 0);
    for (name, by) in [
        ("profile", ""),
        ("profile", "loc,name"),
        ("messages", ""),
        ("messages", "comm"),
        ("states", ""),
        ("counters", ""),
        ("resources", ""),
        ("imbalance", ""),
        ("timeline", ""),
        ("timeline", "states"),
        ("timeline", "loc"),
        ("timeline-messages", "pair"),
        ("timeline-messages", "loc"),
        ("calltree", ""),
        ("calltree", "loc,path"),
    ] {
        // The input as the rows of a partial of this report, and as a whole file.
        let of = PartialOf { report: name, by };
        let framed = [
            format!("tracepipe-stat-partial/2\t{name}\t{by}\n").as_bytes(),
            data,
        ]
        .concat();
        for input in [&framed[..], data] {
            let symbols = Symbols::new();
            let mut merged = report(name, by, histogram, symbols.clone());
            let labels = Labels::new(symbols, false);
            if of.merge("fuzz.part", input, merged.as_mut()).is_err() {
                continue;
            }
            let out = Output::new("fuzz.out", Box::new(Buffer::default()));
            let columns = merged.columns(&labels);
            let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
            let mut table = TableWriter::new(out, TableFormat::Tsv, &columns, true).unwrap();
            for unit in [1, 1_000_000_000] {
                let style = Style { time_factor: unit, top: None };
                let _ = merged.print(&mut table, &style, &labels);
            }
            let _ = table.finish();
        }
    }
});
