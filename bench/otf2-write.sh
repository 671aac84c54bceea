#!/usr/bin/env bash
# OTF2 writing (-t otf2) side by side with the other binary writer (STF) and
# the stream's own TSV, on the 10 M-event generated archive read back as a
# stream: once as enter/leave rows (in time order), once as `state` rows
# (--spans: every frame starts before rows already written, the reorder
# buffer's work). Rounds alternate the commands; each figure is the best
# round, with that run's peak RSS; MB/s are of the input TSV.
# Usage: bench/otf2-write.sh [ROUNDS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
cargo build --release --quiet --bins --example gen-otf2
dir=bench/data/otf2-1250000-8
[ -f "$dir/traces.otf2" ] || target/release/examples/gen-otf2 "$dir" 1250000 8
rows=bench/data/otf2-rows.tsv
spans=bench/data/otf2-spans.tsv
[ -f "$rows" ] || target/release/trace-cat --no-progress -o "$rows" "$dir/traces.otf2"
[ -f "$spans" ] || target/release/trace-cat --no-progress --spans -o "$spans" "$dir/traces.otf2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for input in "$rows" "$spans"; do
  bytes=$(stat -c %s "$input")
  n=$(( $(wc -l < "$input") - 1 ))
  echo "input: $input, $bytes bytes, $n rows"
  names=("-t otf2" "-t stf" "-t tsv")
  best=(0 0 0); rss=(0 0 0)
  for _ in $(seq "$rounds"); do
    for i in 0 1 2; do
      case $i in
        0) args=(-t otf2 -o "$out/w.otf2") ;;
        1) args=(-t stf -o "$out/w.stf") ;;
        2) args=(-t tsv -o "$out/w.tsv") ;;
      esac
      s=$(date +%s%N)
      r=$( { /usr/bin/time -f %M target/release/trace-cat --no-progress "${args[@]}" "$input"; } 2>&1 | tail -1 )
      e=$(date +%s%N)
      if [ "${best[$i]}" = 0 ] || [ $((e - s)) -lt "${best[$i]}" ]; then
        best[$i]=$((e - s)); rss[$i]=$r
      fi
    done
  done
  for i in 0 1 2; do
    awk -v n="${names[$i]}" -v ns="${best[$i]}" -v b="$bytes" -v kb="${rss[$i]}" -v ref="${best[0]}" \
      'BEGIN { printf "  %-8s %6.2f s  %6.1f MB/s  %4.2f x the OTF2 writer'"'"'s time  peak RSS %.1f MiB\n",
               n, ns / 1e9, b / (ns / 1e9) / 1e6, ns / ref, kb / 1024 }'
  done
  echo "  archive: $(du -sb "$out/w.otf2" "$out/w.def" "$out/w" | awk '{s += $1} END {print s}') bytes"
done
