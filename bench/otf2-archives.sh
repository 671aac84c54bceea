#!/usr/bin/env bash
# OTF2 reading side by side with the reference library's otf2-print on the
# archives other tools wrote (the corpus's otf2-external, unpacked into
# bench/data) and on a generated archive of 2 M events (gen-otf2, 250 000
# events x 8 ranks): reading alone (trace-filter -k signal, which writes
# nothing) and conversion to TSV, each with the default threads and with
# one. Rounds alternate the commands; each figure is the best round, with
# that run's peak RSS, and the ratio to otf2-print.
# Usage: bench/otf2-archives.sh [ROUNDS]   (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-15}
command -v otf2-print > /dev/null || { echo "otf2-print is missing (Debian: otf2-tools)" >&2; exit 1; }
cargo build --release --quiet --bins --example gen-otf2
corpus=${TRACEPIPE_CORPUS:-../shared/corpus}/otf2-external
data=bench/data/otf2-external
mkdir -p "$data"
archives=()
if [ -f "$corpus/SOURCES.tsv" ]; then
  # Largest first: file, anchor, events.
  while IFS=$'\t' read -r file anchor events; do
    [ -f "$data/$anchor" ] || tar -xzf "$corpus/$file" -C "$data"
    archives+=("$data/$anchor:$events")
  done < <(awk -F'\t' 'NR > 1 { print $6 "\t" $1 "\t" $7 "\t" $9 }' "$corpus/SOURCES.tsv" \
             | sort -rn | cut -f2-)
fi
generated=bench/data/otf2-250000-8
[ -f "$generated/traces.otf2" ] || target/release/examples/gen-otf2 "$generated" 250000 8
archives+=("$generated/traces.otf2:$(( 250000 / 9 * 9 * 8 + 16 ))")

names=("otf2-print" "trace-filter -k signal" "trace-filter -k signal --threads 1"
       "trace-cat (TSV)" "trace-cat (TSV) --threads 1")
# The command of column $1 on archive $2, into the array `cmd`.
command_of() {
  case $1 in
    0) cmd=(otf2-print "$2") ;;
    1) cmd=(target/release/trace-filter --no-progress -q -k signal "$2") ;;
    2) cmd=(target/release/trace-filter --no-progress -q -k signal --threads 1 "$2") ;;
    3) cmd=(target/release/trace-cat --no-progress -q "$2") ;;
    4) cmd=(target/release/trace-cat --no-progress -q --threads 1 "$2") ;;
  esac
}
for entry in "${archives[@]}"; do
  archive=${entry%:*} events=${entry##*:}
  cat "$(dirname "$archive")"/*/*.evt > /dev/null
  echo "archive: $archive, $(du -sb "$(dirname "$archive")" | cut -f1) bytes, $events events"
  best=(0 0 0 0 0)
  rss=(0 0 0 0 0)
  for _ in $(seq "$rounds"); do
    for i in 0 1 2 3 4; do
      s=$(date +%s%N)
      command_of "$i" "$archive"
      r=$( { /usr/bin/time -f %M "${cmd[@]}" > /dev/null; } 2>&1 | tail -1 )
      e=$(date +%s%N)
      if [ "${best[$i]}" = 0 ] || [ $((e - s)) -lt "${best[$i]}" ]; then
        best[$i]=$((e - s)); rss[$i]=$r
      fi
    done
  done
  for i in 0 1 2 3 4; do
    awk -v n="${names[$i]}" -v ns="${best[$i]}" -v ref="${best[0]}" -v ev="$events" -v kb="${rss[$i]}" \
      'BEGIN { printf "  %-36s %8.1f ms  %6.1f M events/s  %5.1f x otf2-print  peak RSS %.1f MiB\n",
               n, ns / 1e6, ev / (ns / 1e9) / 1e6, ref / ns, kb / 1024 }'
  done
done
