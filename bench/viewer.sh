#!/usr/bin/env bash
# The viewer exports on the generated stream: `bench/viewer.sh [ROWS]`
# (default 10 000 000 rows). Prints, per measurement, the best of 3 wall
# times, MB/s of the stream read, and the peak RSS, with the stream's own
# TSV write as the baseline; then each export's size.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
rows=${1:-10000000}
tsv=$(generated_stream "$rows")
bin=target/release
stream_bytes=$(stat -c %s "$tsv")
echo "rows: $rows; stream: $stream_bytes bytes"
measure "stream → TSV (trace-cat, baseline)"      "$stream_bytes" "$bin/trace-cat" --no-progress "$tsv"
measure "stream → chrome (trace-cat -t chrome)"   "$stream_bytes" "$bin/trace-cat" --no-progress -t chrome "$tsv"
measure "stream → perfetto (trace-cat -t perfetto)" "$stream_bytes" "$bin/trace-cat" --no-progress -t perfetto "$tsv"
for kind in chrome perfetto; do
  size=$("$bin/trace-cat" --no-progress -t "$kind" "$tsv" | wc -c)
  awk -v k="$kind" -v s="$size" -v t="$stream_bytes" \
    'BEGIN { printf "%s output: %d bytes (%.2f of the stream)\n", k, s, s / t }'
done
