#!/usr/bin/env bash
# Runs one fuzz target with seeds from the project's fixtures and, when it
# is beside the clone, the reference corpus. Needs the nightly toolchain and
# cargo-fuzz (`cargo install cargo-fuzz`).
# Usage: fuzz/run.sh TARGET [LIBFUZZER OPTIONS]   e.g. fuzz/run.sh paje -runs=10000000
# Targets: tsv jsonl paje trace pallas writers slice stf merge otf2 chrome parquet paraver
# FUZZ_SANITIZER=none builds without AddressSanitizer (several times faster;
# the code under test is safe Rust apart from the libzfp calls and the
# Pajé reader's UTF-8 checks left out for text already checked).
set -euo pipefail
cd "$(dirname "$0")"
target=$1; shift
seeds=corpus/$target
mkdir -p "$seeds"
shared=../../shared/corpus
# Some machines have a regular file at /dev/null: what one program writes
# there, the next reads back as its input, and cargo's rustc probe reads its
# standard input (/dev/null) as source. Empty it before each cargo run.
clear_dev_null() { [ -c /dev/null ] || : > /dev/null; }
clear_dev_null
seed() { for f in "$@"; do [ -f "$f" ] && cp "$f" "$seeds/" || true; done; }
case $target in
  tsv|writers|slice) seed ../examples/*.tsv ../tests/data/*.tsv ;;
  jsonl)
    for f in ../examples/pingpong.tsv ../tests/data/nasty.tsv; do
      clear_dev_null
      cargo run --quiet --manifest-path ../Cargo.toml --bin trace-cat -- --json "$f" \
        > "$seeds/$(basename "$f" .tsv).jsonl"
    done ;;
  paje)
    seed ../tests/data/paje/*.paje
    [ -d "$shared/paje" ] && find "$shared/paje" -size -256k \( -name '*.paje' -o -name '*.trace' \) \
      -exec cp {} "$seeds/" \; ;;
  trace)
    seed ../examples/*.etf ../tests/data/trace/*.etf
    [ -d "$shared/trace" ] && find "$shared/trace" -size -256k -name '*.etf' -exec cp {} "$seeds/" \; ;;
  chrome)
    seed ../tests/data/viewer/*.json
    for f in ../examples/pingpong.tsv ../tests/data/viewer/kinds.tsv; do
      clear_dev_null
      cargo run --quiet --manifest-path ../Cargo.toml --bin trace-cat -- -q -t chrome "$f" \
        > "$seeds/$(basename "$f" .tsv).json"
    done ;;
  paraver) seed ../tests/data/paraver/*.prv ../tests/data/paraver/*.pcf ../tests/data/paraver/extrae/trmm_v0.prv ;;
  pallas|otf2|parquet) ;;  # the target edits a trace (an archive, a file) of its own
  stf) seed ../tests/data/stf/*.txt ../examples/*.tsv ;;  # and edits a file set of its own
  merge)
    for report in profile messages states counters resources calltree; do
      clear_dev_null
      cargo run --quiet --manifest-path ../Cargo.toml --bin trace-stat -- "$report" --partial \
        ../examples/pingpong.tsv > "$seeds/$report.part"
    done ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
# The otf2, pallas and writers targets write a trace in the temporary folder
# on every execution: in memory they run three to four times as fast.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
clear_dev_null
cargo +nightly fuzz run -O --sanitizer "${FUZZ_SANITIZER:-address}" "$target" "$seeds" -- -max_len=65536 "$@"
