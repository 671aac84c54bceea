#!/usr/bin/env bash
# TRACE reader throughput and memory on a generated file.
# Usage: bench/trace.sh [CLAIMS]   (default 1 000 000 claims)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
claims=${1:-1000000}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-trace
file=bench/data/trace-$claims.etf
[ -s "$file" ] || target/release/examples/gen-trace "$claims" > "$file"
cat "$file" > /dev/null  # warm the page cache
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes, $(wc -l < "$file") lines"
measure "read (trace-cat > /dev/null)" "$bytes" target/release/trace-cat --no-progress "$file"
measure "read + write TRACE (trace-cat -t trace)" "$bytes" target/release/trace-cat --no-progress -t trace "$file"
