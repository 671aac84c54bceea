#!/usr/bin/env bash
# trace-stat critical-path on the shapes where per-function times cost the
# most: many distinct functions, a crossing per message. `pingpong F N`: two
# ranks, N late sends, rank 0 in one of F functions before each; `fan F R`:
# rank 0 runs F functions, then R-1 ranks each wait for its send.
# Usage: bench/critical.sh [OTHER_TRACE_STAT]   (another build, side by side)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
cargo build --release --quiet --bin trace-stat
mkdir -p bench/data
header='kind\ttime\tend\tloc\tcat\tname\tdepth\tpeer\tcomm\ttag\tsize\tid\tvalue\tflags\tattrs'
# row KIND TIME LOC NAME PEER: a stream row (a half when PEER is set).
rows_awk='
function row(k, t, loc, name, peer) {
  if (peer != "") printf "%s\t%d\t\t%s\t\t\t\t%s\tW\t0\t8\t\t\t\t\n", k, t, loc, peer
  else printf "%s\t%d\t\t%s\t\t%s\t0\t\t\t\t\t\t\t\t\n", k, t, loc, name
}
function containers(n,  r) {
  for (r = 0; r < n; r++) printf "container\t0\t\tr%d\tprocess\tr%d\t\t\t\t\t\t\t\t\t\n", r, r
}
BEGIN { printf "'"$header"'\nmeta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\n" }'
pingpong() {
  awk -v F="$1" -v N="$2" "$rows_awk"'
  END {
    containers(2)
    for (i = 0; i < N; i++) {
      t = 110 * i
      row("enter", t, "r0", "f" (i % F)); row("enter", t, "r1", "g" (i * 7 % F))
      row("leave", t + 10, "r1", "g" (i * 7 % F)); row("enter", t + 10, "r1", "MPI_Recv")
      row("leave", t + 100, "r0", "f" (i % F)); row("enter", t + 100, "r0", "MPI_Send")
      row("send", t + 101, "r0", "", "r1"); row("leave", t + 105, "r0", "MPI_Send")
      row("recv", t + 106, "r1", "", "r0"); row("leave", t + 107, "r1", "MPI_Recv")
    }
  }' < /dev/null
}
fan() {
  awk -v F="$1" -v R="$2" "$rows_awk"'
  END {
    containers(R)
    for (r = 1; r < R; r++) row("enter", 0, "r" r, "MPI_Recv")
    for (f = 0; f < F; f++) { row("enter", 2 * f, "r0", "f" f); row("leave", 2 * f + 1, "r0", "f" f) }
    t = 2 * F
    for (r = 1; r < R; r++) {
      row("enter", t, "r0", "MPI_Send"); row("send", t, "r0", "", "r" r)
      row("recv", t + 1, "r" r, "", "r0"); row("leave", t + 1, "r0", "MPI_Send")
      row("leave", t + 2, "r" r, "MPI_Recv"); row("enter", t + 2, "r" r, "work")
      row("leave", t + 3, "r" r, "work"); t += 4
    }
  }' < /dev/null
}
for shape in "pingpong 10 200000" "pingpong 10000 200000" "fan 20000 2000"; do
  file=bench/data/critical-${shape// /-}.tsv
  [ -s "$file" ] || $shape > "$file"
  bytes=$(stat -c %s "$file")
  measure "critical-path, $shape" "$bytes" target/release/trace-stat --no-progress critical-path "$file"
  if [ $# -gt 0 ]; then
    measure "  $1" "$bytes" "$1" --no-progress critical-path "$file"
  fi
done
