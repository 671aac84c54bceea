#!/usr/bin/env bash
# Pajé reader throughput and peak memory on a generated trace.
# Usage: bench/paje.sh [MEGABYTES]   (default 500)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
mb=${1:-500}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-paje --example paje-floor
file=bench/data/paje-$mb.paje
[ -s "$file" ] || target/release/examples/gen-paje "$mb" > "$file"
cat "$file" > /dev/null  # warm the page cache
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes, $(wc -l < "$file") lines"
measure "wc -l" "$bytes" wc -l "$file"
# The floor: the first steps of reading alone (no simulation, no rows).
for steps in lines words lookups; do
  measure "floor: $steps (paje-floor)" "$bytes" target/release/examples/paje-floor "$file" "$steps"
done
measure "read only (trace-filter -k signal)" "$bytes" target/release/trace-filter --no-progress -k signal "$file"
measure "trace-cat (stream TSV to /dev/null)" "$bytes" target/release/trace-cat --no-progress "$file"
measure "trace-cat -t pjdump" "$bytes" target/release/trace-cat --no-progress -t pjdump "$file"
