#!/usr/bin/env bash
# STF write and read on the generated stream: `bench/stf.sh [ROWS]` (default
# 10 000 000 rows). Prints, per measurement, the best of 3 wall times, MB/s
# of the STF file set (read) or of the stream (write), and the peak RSS;
# the stream's own read and write as the baseline, side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
rows=${1:-10000000}
tsv=$(generated_stream "$rows")
bin=target/release
stf=bench/data/stf-$rows.stf
"$bin/trace-cat" --no-progress -t stf -o "$stf" "$tsv"
cat "$stf"* > /dev/null
stream_bytes=$(stat -c %s "$tsv")
stf_bytes=$(cat "$stf"* | wc -c)
echo "rows: $rows; stream: $stream_bytes bytes; STF file set: $stf_bytes bytes ($(ls "$stf"* | wc -l) files)"
measure "stream → TSV (trace-cat, baseline)"  "$stream_bytes" "$bin/trace-cat" --no-progress "$tsv"
measure "stream → STF (trace-cat -t stf)"     "$stream_bytes" "$bin/trace-cat" --no-progress -t stf -o "$stf" "$tsv"
measure "read STF (trace-filter -k signal)"   "$stf_bytes"    "$bin/trace-filter" --no-progress -k signal "$stf"
measure "STF → TSV (trace-cat)"               "$stf_bytes"    "$bin/trace-cat" --no-progress "$stf"
