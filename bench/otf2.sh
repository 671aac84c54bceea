#!/usr/bin/env bash
# OTF2 reading side by side with the reference library's otf2-print (Debian's
# otf2-tools) on a generated archive: reading alone (trace-filter -k signal,
# which writes nothing), and conversion to the stream's TSV, each with the
# default threads and with one. Rounds alternate the commands; each figure is
# the best round, with that run's peak RSS, and the ratio to otf2-print.
# Usage: bench/otf2.sh [EVENTS_PER_RANK] [RANKS] [ROUNDS]
#   (default 1 250 000 events x 8 ranks = 10 M events, 5 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
events=${1:-1250000}
ranks=${2:-8}
rounds=${3:-5}
command -v otf2-print > /dev/null || { echo "otf2-print is missing (Debian: otf2-tools)" >&2; exit 1; }
cargo build --release --quiet --bins --example gen-otf2
dir=bench/data/otf2-$events-$ranks
[ -f "$dir/traces.otf2" ] || target/release/examples/gen-otf2 "$dir" "$events" "$ranks"
archive=$dir/traces.otf2
cat "$dir"/traces/*.evt > /dev/null
total=$(( (events / 9) * 9 * ranks + 2 * ranks ))
echo "archive: $archive, $(du -sb "$dir" | cut -f1) bytes, $total events"

otf2_side_by_side "$archive" "$total" "$rounds"

# Partitions: one part per rank (`--under 'MPI Rank K'`), each reading only
# that rank's event file, reported with --partial and merged; the speed-up
# is the whole report's time over the slowest part's plus the merge's (the
# wall time with one machine per part), and the merged report must equal
# the whole one.
parts=$(mktemp -d)
time_of() { local s e; s=$(date +%s%N); "$@" > /dev/null; e=$(date +%s%N); echo $((e - s)); }
whole=$(time_of target/release/trace-stat profile --no-progress -o "$parts/whole.tsv" "$archive")
slowest=0
for r in $(seq 0 $((ranks - 1))); do
  t=$(time_of target/release/trace-stat profile --no-progress --partial --under "MPI Rank $r" \
      -o "$parts/rank$r.partial" "$archive")
  [ "$t" -gt "$slowest" ] && slowest=$t
done
merge=$(time_of target/release/trace-stat profile --merge -o "$parts/merged.tsv" "$parts"/rank*.partial)
cmp -s "$parts/whole.tsv" "$parts/merged.tsv" && same="the same report" || same="REPORTS DIFFER"
awk -v w="$whole" -v p="$slowest" -v m="$merge" -v n="$ranks" -v s="$same" \
  'BEGIN { printf "profile whole %.2f s; %d parts: slowest %.2f s + merge %.2f s: %.1f x faster on %d machines (%s)\n",
           w / 1e9, n, p / 1e9, m / 1e9, w / (p + m), n, s }'
rm -rf "$parts"
