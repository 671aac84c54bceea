#!/usr/bin/env bash
# Pajé reader throughput and peak memory on a generated trace, next to
# PajeNG's pj_dump on the same file when `pj_dump` is on PATH (the ratios
# are pj_dump's time over ours, so 25 means 25 times faster).
# Usage: bench/paje.sh [MEGABYTES] [SHAPE]   (default 500; SHAPE: the
#   generator's default, or `wide`: 544 containers, short lines, user fields)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
mb=${1:-500}
shape=${2:-}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-paje --example paje-floor
file=bench/data/paje-$mb${shape:+-$shape}.paje
[ -s "$file" ] || target/release/examples/gen-paje "$mb" $shape > "$file"
cat "$file" > /dev/null  # warm the page cache
bytes=$(stat -c %s "$file")
echo "file: $file, $bytes bytes, $(wc -l < "$file") lines"
measure "wc -l" "$bytes" wc -l "$file"
# The floor: the first steps of reading alone (no simulation, no rows).
for steps in lines words lookups; do
  measure "floor: $steps (paje-floor)" "$bytes" target/release/examples/paje-floor "$file" "$steps"
done
# Each measurement's line is kept to compute the ratios at the end.
read_only=$(measure "read only (trace-filter -k signal)" "$bytes" \
  target/release/trace-filter --no-progress -k signal "$file")
echo "$read_only"
cat_tsv=$(measure "trace-cat (stream TSV to /dev/null)" "$bytes" \
  target/release/trace-cat --no-progress "$file")
echo "$cat_tsv"
cat_pjdump=$(measure "trace-cat -t pjdump" "$bytes" \
  target/release/trace-cat --no-progress -t pjdump "$file")
echo "$cat_pjdump"
cat_one=$(measure "trace-cat --threads 1" "$bytes" \
  target/release/trace-cat --no-progress --threads 1 "$file")
echo "$cat_one"
if command -v pj_dump > /dev/null; then
  reference=$(measure "pj_dump (PajeNG)" "$bytes" pj_dump "$file")
  echo "$reference"
  seconds() { cut -f2 <<< "$1" | cut -d' ' -f1; }
  awk -v p="$(seconds "$reference")" -v c="$(seconds "$cat_tsv")" \
    -v d="$(seconds "$cat_pjdump")" -v r="$(seconds "$read_only")" \
    -v o="$(seconds "$cat_one")" 'BEGIN {
      printf "pj_dump / read only: %.1fx\n", p / r
      printf "pj_dump / trace-cat: %.1fx\n", p / c
      printf "pj_dump / trace-cat -t pjdump: %.1fx\n", p / d
      printf "pj_dump / trace-cat --threads 1: %.1fx\n", p / o
    }'
else
  echo "pj_dump is not on PATH: no side-by-side ratio"
fi
