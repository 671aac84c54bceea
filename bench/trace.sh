#!/usr/bin/env bash
# TRACE reader throughput and memory on a generated file.
# Usage: bench/trace.sh [CLAIMS]   (default 1 000 000 claims)
set -euo pipefail
cd "$(dirname "$0")/.."
claims=${1:-1000000}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-trace
file=bench/data/trace-$claims.etf
[ -s "$file" ] || target/release/examples/gen-trace "$claims" > "$file"
cat "$file" > /dev/null  # warm the page cache
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes, $(wc -l < "$file") lines"
for what in "read (trace-cat > /dev/null)|target/release/trace-cat --no-progress $file" \
            "read + write TRACE (trace-cat -t trace)|target/release/trace-cat --no-progress -t trace $file"; do
  name=${what%%|*}; cmd=${what#*|}
  best=0; rss=0
  for _ in 1 2 3; do
    s=$(date +%s%N)
    r=$( { /usr/bin/time -f %M $cmd > /dev/null; } 2>&1 | tail -1 )
    e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); rss=$r; fi
  done
  awk -v n="$name" -v ns="$best" -v b="$bytes" -v kb="$rss" \
    'BEGIN { printf "%s\t%.3f s\t%.0f MB/s\tpeak RSS %.0f MiB\n", n, ns / 1e9, b / (ns / 1e9) / 1e6, kb / 1024 }'
done
