#!/usr/bin/env bash
# trace-stat next to trace-filter reading the same generated stream (the
# cost of the report over reading), with peak RSS: every report, the
# analyses (waits, imbalance, timeline, matrix, critical path) beside the
# profile.
# Usage: bench/stat.sh [ROWS]   (default 10 000 000 rows of gen-stream)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-10000000}
bin=target/release
tsv=$(generated_stream "$rows")
bytes=$(stat -c %s "$tsv")
echo "rows: $rows; tsv: $bytes bytes"
measure "read (trace-filter -k signal)" "$bytes" "$bin/trace-filter" --no-progress -k signal "$tsv"
measure "trace-stat profile"            "$bytes" "$bin/trace-stat" --no-progress profile "$tsv"
measure "trace-stat messages"           "$bytes" "$bin/trace-stat" --no-progress messages "$tsv"
measure "trace-stat counters"           "$bytes" "$bin/trace-stat" --no-progress counters "$tsv"
# The analyses of where the time goes, next to the profile they build on.
measure "trace-stat waits"              "$bytes" "$bin/trace-stat" --no-progress waits "$tsv"
measure "trace-stat waits --by pair"    "$bytes" "$bin/trace-stat" --no-progress waits --by pair,pattern "$tsv"
measure "trace-stat imbalance"          "$bytes" "$bin/trace-stat" --no-progress imbalance --per-location "$tsv"
measure "trace-stat timeline --bin 1ms" "$bytes" "$bin/trace-stat" --no-progress timeline --bin 1ms "$tsv"
measure "trace-stat timeline --bins 100 (two passes)" "$bytes" "$bin/trace-stat" --no-progress timeline --bins 100 "$tsv"
measure "trace-stat messages --matrix"  "$bytes" "$bin/trace-stat" --no-progress messages --matrix "$tsv"
measure "trace-stat critical-path"      "$bytes" "$bin/trace-stat" --no-progress critical-path "$tsv"
measure "trace-stat critical-path --segments" "$bytes" "$bin/trace-stat" --no-progress critical-path --segments "$tsv"
measure "trace-stat summary"            "$bytes" "$bin/trace-stat" --no-progress summary "$tsv"
# What comes after the profile: the longest frames, call paths, two runs
# compared (two profiles), message volume over time.
measure "trace-stat top -n 10"          "$bytes" "$bin/trace-stat" --no-progress top -n 10 "$tsv"
measure "trace-stat calltree"           "$bytes" "$bin/trace-stat" --no-progress calltree "$tsv"
measure "trace-stat calltree --folded"  "$bytes" "$bin/trace-stat" --no-progress calltree --folded "$tsv"
measure "trace-stat compare (two runs)" "$bytes" "$bin/trace-stat" --no-progress compare "$tsv" "$tsv"
measure "trace-stat timeline --messages --bin 1ms" "$bytes" "$bin/trace-stat" --no-progress timeline --messages --bin 1ms "$tsv"
measure "trace-stat profile --counters" "$bytes" "$bin/trace-stat" --no-progress -q profile --counters "$tsv"

# Scale-out: the same report over two halves split by location, run in
# parallel with --partial and merged, against one run over the whole.
for half in 1 2; do
  part=bench/data/stream-$rows.part$half.tsv
  invert=(); [ "$half" = 2 ] && invert=(-v)
  [ -s "$part" ] || "$bin/trace-filter" -q --no-progress "${invert[@]}" -l 'rank[0-7]' "$tsv" > "$part"
done
p1=bench/data/stream-$rows.part1.tsv p2=bench/data/stream-$rows.part2.tsv
scale_out="printf '%s\\n' $p1 $p2 | xargs -P2 -I{} $bin/trace-stat --no-progress profile --partial -o {}.partial {} &&
  $bin/trace-stat profile --merge $p1.partial $p2.partial"
measure "trace-stat profile, whole"                 "$bytes" "$bin/trace-stat" --no-progress profile "$tsv"
measure "trace-stat profile, 2 parts -P2 and merge" "$bytes" bash -c "$scale_out"
