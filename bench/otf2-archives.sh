#!/usr/bin/env bash
# OTF2 reading side by side with the reference library's otf2-print on the
# archives other tools wrote (the corpus's otf2-external, unpacked into
# bench/data) and on a generated archive of 2 M events (gen-otf2, 250 000
# events x 8 ranks), as bench/lib.sh's otf2_side_by_side measures them.
# Usage: bench/otf2-archives.sh [ROUNDS]   (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
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

for entry in "${archives[@]}"; do
  archive=${entry%:*} events=${entry##*:}
  cat "$(dirname "$archive")"/*/*.evt > /dev/null
  echo "archive: $archive, $(du -sb "$(dirname "$archive")" | cut -f1) bytes, $events events"
  otf2_side_by_side "$archive" "$events" "$rounds"
done
