#!/usr/bin/env bash
# Pajé reader throughput and peak memory on a generated trace.
# Usage: bench/paje.sh [MEGABYTES]   (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-500}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-paje
file=bench/data/paje-$mb.paje
[ -s "$file" ] || target/release/examples/gen-paje "$mb" > "$file"
cat "$file" > /dev/null  # warm the page cache
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes, $(wc -l < "$file") lines"
run() { # name, command...
  local name=$1; shift
  local best=0 rss=0
  for _ in 1 2 3; do
    local s e r
    s=$(date +%s%N)
    r=$( { /usr/bin/time -f %M "$@" > /dev/null; } 2>&1 | tail -1 )
    e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); rss=$r; fi
  done
  awk -v n="$name" -v ns="$best" -v b="$bytes" -v kb="$rss" \
    'BEGIN { printf "%s\t%.2f s\t%.0f MB/s\tpeak RSS %.1f MiB\n", n, ns / 1e9, b / (ns / 1e9) / 1e6, kb / 1024 }'
}
run "wc -l" wc -l "$file"
run "read only (trace-filter -k signal)" target/release/trace-filter --no-progress -k signal "$file"
run "trace-cat (stream TSV to /dev/null)" target/release/trace-cat --no-progress "$file"
run "trace-cat -t pjdump" target/release/trace-cat --no-progress -t pjdump "$file"
