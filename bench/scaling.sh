#!/usr/bin/env bash
# Speed-up with threads: trace-cat of a Pallas trace, a TSV stream and a
# Pajé trace (to TSV, and to JSON Lines, which the writer thread encodes)
# with --threads 1, 2, ... up to the cores the process may use (at least
# 2), best of ROUNDS runs each, the counts alternating, side by side in one
# run; prints each time and its ratio to one thread.
# Usage: bench/scaling.sh [ROUNDS]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-paje --example gen-stream --example gen-pallas
paje=bench/data/paje-200.paje
tsv=bench/data/stream-5000000.tsv
pallas=bench/data/pallas-2000000
[ -s "$paje" ] || target/release/examples/gen-paje 200 > "$paje"
[ -s "$tsv" ] || target/release/examples/gen-stream 5000000 > "$tsv"
[ -d "$pallas" ] || target/release/examples/gen-pallas "$pallas" 2000000 2 > /dev/null
cat "$paje" "$tsv" > /dev/null
cores=$(nproc)
counts=$(seq 1 $((cores > 2 ? cores : 2)))

once() { # nanoseconds of one run of "$@"
  local s e
  s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N)
  echo $((e - s))
}

printf '%-16s %7s %9s %7s\n' input threads seconds ratio
for case in "pallas:$pallas" "tsv:$tsv" "paje:$paje" "paje-json:$paje"; do
  name=${case%%:*}; file=${case#*:}
  json=(); [ "$name" = paje-json ] && json=(--json)
  # The thread counts alternate round by round, so a busy spell on the
  # shared machine falls on all of them; the best of each is kept.
  declare -A best=()
  for _ in $(seq "$rounds"); do
    for n in $counts; do
      t=$(once target/release/trace-cat --no-progress "${json[@]}" --threads "$n" "$file")
      if [ -z "${best[$n]:-}" ] || [ "$t" -lt "${best[$n]}" ]; then best[$n]=$t; fi
    done
  done
  for n in $counts; do
    awk -v c="$name" -v n="$n" -v t="${best[$n]}" -v o="${best[1]}" \
      'BEGIN { printf "%-16s %7d %9.3f %7.2f\n", c, n, t / 1e9, t / o }'
  done
  unset best
done
