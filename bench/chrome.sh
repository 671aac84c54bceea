#!/usr/bin/env bash
# The Chrome trace JSON reader on a generated Kineto-like file (events in
# Kineto's order: CPU events at completion, GPU kernels after them), side
# by side with `jq -c '.traceEvents[]' | wc -l` (only cutting it into
# events): time and peak RSS. Rounds alternate the commands; each figure is
# the best round.
# Usage: bench/chrome.sh [EVENTS] [ROUNDS]   (default 2 000 000 CPU events: 3.1 M events, ~500 MB; 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
events=${1:-2000000}
rounds=${2:-3}
json=bench/data/kineto-$events.json
mkdir -p bench/data
cargo build --release --quiet --bins
[ -s "$json" ] || python3 bench/gen-chrome.py "$events" > "$json"
bytes=$(stat -c %s "$json")
cat "$json" > /dev/null
echo "CPU events: $events; file: $bytes bytes"
names=("jq -c '.traceEvents[]' | wc -l" "trace-cat (TSV)" "trace-stat profile")
command_of() {
  case $1 in
    0) cmd=(bash -c "jq -c '.traceEvents[]' '$json' | wc -l") ;;
    1) cmd=(target/release/trace-cat --no-progress -q "$json") ;;
    2) cmd=(target/release/trace-stat --no-progress -q profile "$json") ;;
  esac
}
alternate "$rounds" 3
for i in 0 1 2; do
  awk -v n="${names[$i]}" -v ns="${best[$i]}" -v b="$bytes" -v kb="${rss[$i]}" -v jq="${best[0]}" \
    'BEGIN { printf "%s\t%.2f s\t%.0f MB/s\tpeak RSS %.1f MiB\t%.1fx jq\n", n, ns / 1e9, b / (ns / 1e9) / 1e6, kb / 1024, jq / ns }'
done
