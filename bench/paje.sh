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
measure "read only (trace-filter -k signal)" "$bytes" \
  target/release/trace-filter --no-progress -k signal "$file"
measure "trace-cat (stream TSV to /dev/null)" "$bytes" target/release/trace-cat --no-progress "$file"
measure "trace-cat -t pjdump" "$bytes" target/release/trace-cat --no-progress -t pjdump "$file"
measure "trace-cat --threads 1" "$bytes" target/release/trace-cat --no-progress --threads 1 "$file"
if command -v pj_dump > /dev/null; then
  # Side by side: each round runs pj_dump and then each of ours, so a
  # change in the host's load reaches both; the best of 5 rounds of each.
  # The ratios are pj_dump's time over ours, so 10 means 10 times faster.
  ms() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
  names=(pj_dump "read only" trace-cat "trace-cat -t pjdump" "trace-cat --threads 1")
  runs=("pj_dump $file"
    "target/release/trace-filter --no-progress -k signal $file"
    "target/release/trace-cat --no-progress $file"
    "target/release/trace-cat --no-progress -t pjdump $file"
    "target/release/trace-cat --no-progress --threads 1 $file")
  best=(0 0 0 0 0)
  for round in 1 2 3 4 5; do
    line="round $round:"
    for i in 0 1 2 3 4; do
      # shellcheck disable=SC2086 # each run is a command and its words
      t=$(ms ${runs[$i]})
      line+=" ${names[$i]} $t ms,"
      if [ "${best[$i]}" = 0 ] || [ "$t" -lt "${best[$i]}" ]; then best[$i]=$t; fi
    done
    echo "${line%,}"
  done
  echo "best of 5: pj_dump ${best[0]} ms"
  for i in 1 2 3 4; do
    awk -v n="${names[$i]}" -v p="${best[0]}" -v t="${best[$i]}" \
      'BEGIN { printf "pj_dump / %s: %.1fx (%d ms)\n", n, p / t, t }'
  done
else
  echo "pj_dump is not on PATH: no side-by-side ratio"
fi
