#!/usr/bin/env bash
# One thread or two: `trace-cat` on the inputs of the other benchmarks with
# --threads 1, --threads 2 and the default (auto), output to /dev/null.
# Usage: bench/pump.sh   (run bench/paje.sh 100, bench/stream.sh,
# bench/pallas.sh and bench/trace.sh first: they make the inputs)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
cargo build --release --quiet --bins
for input in bench/data/paje-100.paje bench/data/stream-10000000.tsv \
             bench/data/pallas-5000000-2-zstd bench/data/trace-1000000.etf; do
  if [ ! -e "$input" ]; then echo "missing $input (see the usage line)"; continue; fi
  bytes=$(du -sb "$input" | cut -f1)
  for threads in 1 2 auto; do
    measure "$input --threads $threads" "$bytes" \
      target/release/trace-cat --no-progress --threads "$threads" "$input"
  done
done
