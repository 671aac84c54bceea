#!/usr/bin/env bash
# trace-slice cutting a 1 % window out of the middle of the generated stream
# and of a generated Pajé trace, next to reading the same file, with peak RSS.
# Usage: bench/slice.sh [ROWS] [PAJE_MEGABYTES]   (default 10 000 000 and 500)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-10000000} mb=${2:-500}
bin=target/release
tsv=$(generated_stream "$rows")
cargo build --release --quiet --example gen-paje
paje=bench/data/paje-$mb.paje
[ -s "$paje" ] || target/release/examples/gen-paje "$mb" > "$paje"
cat "$paje" > /dev/null

# The window [50 %, 51 %) of the file's span, from trace-stat summary.
window() {
  "$bin/trace-stat" -q --no-progress summary "$1" |
    awk -F'\t' '$1 == "first" { f = $3 } $1 == "last" { l = $3 }
      END { w = (l - f) / 100; printf "%.0f %.0f\n", f + 50 * w, f + 51 * w }'
}
for file in "$tsv" "$paje"; do
  bytes=$(stat -c %s "$file")
  read -r from to < <(window "$file")
  echo "$file: $bytes bytes; window [$from, $to) ns"
  measure "read (trace-filter -k signal)"   "$bytes" "$bin/trace-filter" --no-progress -k signal "$file"
  measure "trace-filter --from --to"        "$bytes" "$bin/trace-filter" --no-progress --from "$from" --to "$to" "$file"
  measure "trace-slice --from --to"         "$bytes" "$bin/trace-slice" --no-progress --from "$from" --to "$to" "$file"
done
