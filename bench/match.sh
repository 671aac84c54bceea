#!/usr/bin/env bash
# trace-match next to trace-cat on the same generated stream (the cost of
# matching, side by side in one run), with peak RSS.
# Usage: bench/match.sh [ROWS]   (default 10 000 000 rows of gen-stream)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-10000000}
bin=target/release
tsv=$(generated_stream "$rows")
bytes=$(stat -c %s "$tsv")
echo "rows: $rows; tsv: $bytes bytes; $(grep -c "^send" "$tsv") sends"
measure "trace-cat"                 "$bytes" "$bin/trace-cat" --no-progress "$tsv"
measure "trace-match"               "$bytes" "$bin/trace-match" --no-progress -q "$tsv"
