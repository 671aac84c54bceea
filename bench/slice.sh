#!/usr/bin/env bash
# trace-slice cutting a 1 % window at the start and in the middle of each
# input, next to reading the whole input (trace-filter -k signal, which
# drops every row, unread where the reader can) and converting it
# (trace-cat to TSV), with peak RSS: by default (reading stops once nothing
# still to come reaches into the window) and with --true-ends (read to the
# end). Inputs: the generated stream (TSV, which cannot tell and is read to
# the end), the same stream written as OTF2 by this build (enter/leave
# rows) and as STF (whose records with extents are read to the end too),
# a generated Pajé trace, a generated OTF2 archive and a generated Pallas
# trace.
# With BASELINE=DIR (a folder holding another build's trace-slice), each
# window is also cut by that build, side by side.
# Usage: [BASELINE=DIR] bench/slice.sh [ROWS] [PAJE_MEGABYTES] [OTF2_EVENTS_PER_RANK] [PALLAS_EVENTS_PER_THREAD]
#   (default 10 000 000 rows, 500 MB, 1 250 000 x 8 ranks, 20 000 000 x 2 threads)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-10000000} mb=${2:-500} otf2_events=${3:-1250000} pallas_events=${4:-20000000}
bin=target/release
tsv=$(generated_stream "$rows")
cargo build --release --quiet --example gen-paje --example gen-otf2 --example gen-pallas
paje=bench/data/paje-$mb.paje
[ -s "$paje" ] || target/release/examples/gen-paje "$mb" > "$paje"
otf2_dir=bench/data/otf2-$otf2_events-8
[ -f "$otf2_dir/traces.otf2" ] || target/release/examples/gen-otf2 "$otf2_dir" "$otf2_events" 8
# Written again each run: the archive is what this build's writer makes.
stream_otf2=bench/data/stream-$rows-otf2
rm -rf "$stream_otf2"
"$bin/trace-cat" --no-progress -t otf2 -o "$stream_otf2" "$tsv"
stream_stf=bench/data/stream-$rows.stf
"$bin/trace-cat" --no-progress -t stf -o "$stream_stf" "$tsv"
pallas=bench/data/pallas-$pallas_events-2-zstd
[ -d "$pallas" ] || target/release/examples/gen-pallas "$pallas" "$pallas_events" 2 zstd

# The window [AT %, AT + 1 %) of the trace's span, from trace-stat summary.
window() {
  "$bin/trace-stat" -q --no-progress summary "$1" |
    awk -F'\t' -v at="$2" '$1 == "first" { f = $3 } $1 == "last" { l = $3 }
      END { w = (l - f) / 100; printf "%.0f %.0f\n", f + at * w, f + (at + 1) * w }'
}
for file in "$tsv" "$stream_otf2/traces.otf2" "$stream_stf" "$paje" "$otf2_dir/traces.otf2" "$pallas"; do
  case $file in
    # An STF file set is its index and the files named after it.
    *.stf) bytes=$(cat "$file"* | wc -c) ;;
    *) bytes=$(du -sb "${file%/traces.otf2}" | cut -f1) ;;
  esac
  cat "${file%/traces.otf2}"* > /dev/null 2>&1 || find "${file%/traces.otf2}" -type f -exec cat {} + > /dev/null
  echo "$file: $bytes bytes"
  measure "read (trace-filter -k signal)" "$bytes" "$bin/trace-filter" --no-progress -k signal "$file"
  measure "convert (trace-cat)" "$bytes" "$bin/trace-cat" --no-progress "$file"
  measure "a window of 1 ns at the start" "$bytes" "$bin/trace-slice" --no-progress --to 1 "$file"
  for at in 0 50; do
    read -r from to < <(window "$file" "$at")
    echo "  window [$at %, $((at + 1)) %) = [$from, $to) ns"
    measure "  trace-slice" "$bytes" "$bin/trace-slice" --no-progress --from "$from" --to "$to" "$file"
    if [ -n "${BASELINE:-}" ]; then
      measure "  trace-slice (baseline)" "$bytes" \
        "$BASELINE/trace-slice" --no-progress --from "$from" --to "$to" "$file"
    fi
    measure "  trace-slice --true-ends" "$bytes" \
      "$bin/trace-slice" --no-progress --true-ends --from "$from" --to "$to" "$file"
  done
done
