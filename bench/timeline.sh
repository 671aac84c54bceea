#!/usr/bin/env bash
# trace-stat timeline at its most bins (--bins 1000000) on a stream where
# they cost the most: 300 functions, each frame a few bins long and far
# from the last frame of its function (600 000 frames on 4 locations).
# Usage: bench/timeline.sh [OTHER_TRACE_STAT]   (another build, side by side)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
cargo build --release --quiet --bin trace-stat
mkdir -p bench/data
file=bench/data/timeline-300-functions.tsv
[ -s "$file" ] || awk 'BEGIN {
  srand(1)
  print "kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize\tid\tvalue\tflags\tattrs"
  print "meta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t"
  for (r = 0; r < 4; r++) printf "container\t0\t\tr%d\tprocess\tr%d\t\t\t\t\t\t\t\t\t\n", r, r
  t = 0
  for (i = 0; i < 600000; i++) {
    f = "f" int(rand() * 300); loc = "r" (i % 4); d = 1 + int(rand() * 2000)
    printf "enter\t%d\t\t%s\t\t%s\t\t\t\t\t\t\t\t\t\n", t, loc, f
    printf "leave\t%d\t\t%s\t\t%s\t\t\t\t\t\t\t\t\t\n", t + d, loc, f
    t += d + 1
  }
}' > "$file"
bytes=$(stat -c %s "$file")
for bin in target/release/trace-stat "$@"; do
  measure "$bin timeline --bins 1000000" "$bytes" "$bin" --no-progress timeline --bins 1000000 "$file"
done
