#!/usr/bin/env bash
# Side-by-side ratios of two builds on the same files in one run, for "not
# slower than before": runs each command with the binaries of OLD and of NEW
# in turn, ROUNDS times (alternating, so machine noise falls on both), and
# prints the best wall time of each and NEW/OLD.
# Usage: bench/compare.sh OLD_BIN_DIR [NEW_BIN_DIR] [ROUNDS]
#   (NEW defaults to target/release; build OLD from an earlier commit with
#    `git worktree add /tmp/old COMMIT && cargo build --release` there.)
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1; new=${2:-target/release}; rounds=${3:-5}
mkdir -p bench/data
cargo build --release --quiet --bins --example gen-paje --example gen-stream --example gen-pallas
paje=bench/data/paje-200.paje
tsv=bench/data/stream-5000000.tsv
pallas=bench/data/pallas-2000000
[ -s "$paje" ] || target/release/examples/gen-paje 200 > "$paje"
[ -s "$tsv" ] || target/release/examples/gen-stream 5000000 > "$tsv"
[ -d "$pallas" ] || target/release/examples/gen-pallas "$pallas" 2000000 2 > /dev/null
cat "$paje" "$tsv" > /dev/null

once() { # nanoseconds of one run of "$@"
  local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N); echo $((e - s))
}
compare() { # name, then the command line with the binary name first
  local name=$1 bin=$2; shift 2
  local best_old=0 best_new=0 t
  for _ in $(seq "$rounds"); do
    t=$(once "$old/$bin" "$@"); if [ "$best_old" = 0 ] || [ "$t" -lt "$best_old" ]; then best_old=$t; fi
    t=$(once "$new/$bin" "$@"); if [ "$best_new" = 0 ] || [ "$t" -lt "$best_new" ]; then best_new=$t; fi
  done
  awk -v n="$name" -v o="$best_old" -v x="$best_new" \
    'BEGIN { printf "%-34s old %6.3f s  new %6.3f s  new/old %.2f\n", n, o / 1e9, x / 1e9, x / o }'
}
compare "paje: read (filter drops all)" trace-filter --no-progress -k signal "$paje"
compare "paje: trace-cat" trace-cat --no-progress "$paje"
compare "paje: -t pjdump" trace-cat --no-progress -t pjdump "$paje"
compare "tsv: read (filter drops all)" trace-filter --no-progress -k signal "$tsv"
compare "tsv: filter keeps enter" trace-filter --no-progress -k enter "$tsv"
compare "tsv: trace-cat" trace-cat --no-progress "$tsv"
compare "tsv: to jsonl" trace-cat --no-progress --json "$tsv"
compare "tsv: --spans" trace-cat --no-progress --spans "$tsv"
compare "pallas: trace-cat" trace-cat --no-progress "$pallas"
