#!/usr/bin/env bash
# Stream codec throughput: reading and writing TSV and JSON Lines, next to `wc -l`
# on the same files. Usage: bench/stream.sh [ROWS]   (default 10 000 000 rows)
# Prints one TSV line per measurement: what, seconds, rows/s, MB/s.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-stream
bin=target/release
tsv=bench/data/stream-$rows.tsv
json=bench/data/stream-$rows.jsonl
[ -s "$tsv" ] || target/release/examples/gen-stream "$rows" > "$tsv"
[ -s "$json" ] || "$bin/trace-cat" --json "$tsv" > "$json"

best() { # best wall time in seconds of 3 runs of "$@", output to /dev/null
  local best=0
  for _ in 1 2 3; do
    local s e
    s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.6f", ns / 1e9 }'
}
report() { # name seconds file
  local bytes; bytes=$(stat -c %s "$3")
  awk -v n="$1" -v s="$2" -v r="$rows" -v b="$bytes" \
    'BEGIN { printf "%s\t%.3f s\t%.2f M rows/s\t%.0f MB/s\n", n, s, r / s / 1e6, b / s / 1e6 }'
}
cat "$tsv" "$json" > /dev/null  # warm the page cache
echo "rows: $rows; tsv: $(stat -c %s "$tsv") bytes; jsonl: $(stat -c %s "$json") bytes"
wc=$(best wc -l "$tsv")
filter=$(best "$bin/trace-filter" --no-progress -k signal "$tsv")
cat=$(best "$bin/trace-cat" --no-progress "$tsv")
awk=$(best awk -F'\t' '{ n += $2 }' "$tsv")
report "wc -l (tsv)"                    "$wc" "$tsv"
report "read tsv (filter drops all)"    "$filter" "$tsv"
report "read+write tsv (trace-cat)"     "$cat" "$tsv"
report "awk summing a column (tsv)"     "$awk" "$tsv"
awk -v w="$wc" -v f="$filter" -v c="$cat" -v a="$awk" 'BEGIN {
  printf "filter -k signal takes %.1f times wc -l; trace-cat runs %.1f times as fast as awk\n", f / w, a / c
}'
report "read tsv, write jsonl"          "$(best "$bin/trace-cat" --no-progress --json "$tsv")" "$tsv"
report "wc -l (jsonl)"                  "$(best wc -l "$json")" "$json"
report "read jsonl (filter drops all)"  "$(best "$bin/trace-filter" --no-progress -k signal "$json")" "$json"
report "read jsonl, write tsv"          "$(best "$bin/trace-cat" --no-progress "$json")" "$json"
