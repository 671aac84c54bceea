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
cargo build --release --quiet --bins --example gen-paje --example gen-stream --example gen-pallas \
  --example gen-trace
paje=bench/data/paje-200.paje
tsv=bench/data/stream-5000000.tsv
pallas=bench/data/pallas-2000000
etf=bench/data/trace-300000.etf
[ -s "$paje" ] || target/release/examples/gen-paje 200 > "$paje"
[ -s "$tsv" ] || target/release/examples/gen-stream 5000000 > "$tsv"
[ -d "$pallas" ] || target/release/examples/gen-pallas "$pallas" 2000000 2 > /dev/null
[ -s "$etf" ] || target/release/examples/gen-trace 300000 > "$etf"
cat "$paje" "$tsv" "$etf" > /dev/null
stf=$(mktemp -d)/c.stf
trap 'rm -rf "$(dirname "$stf")"' EXIT
# A 1 % window in the middle of the stream's span.
read -r from to < <("$new/trace-stat" -q --no-progress summary "$tsv" |
  awk -F'\t' '$1 == "first" { f = $3 } $1 == "last" { l = $3 }
    END { w = (l - f) / 100; printf "%.0f %.0f\n", f + 50 * w, f + 51 * w }')

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
compare "tsv: trace-match" trace-match --no-progress "$tsv"
compare "tsv: trace-stat profile" trace-stat --no-progress profile "$tsv"
compare "tsv: trace-stat messages" trace-stat --no-progress messages "$tsv"
compare "tsv: trace-slice 1 %" trace-slice --no-progress --from "$from" --to "$to" "$tsv"
compare "tsv: -t stf" trace-cat --no-progress -t stf -o "$stf" "$tsv"
compare "stf: read" trace-filter --no-progress -k signal "$stf"
compare "tsv: -t chrome" trace-cat --no-progress -t chrome "$tsv"
compare "tsv: -t perfetto" trace-cat --no-progress -t perfetto "$tsv"
compare "trace: read" trace-cat --no-progress "$etf"
compare "trace: -t trace" trace-cat --no-progress -t trace "$etf"
compare "pallas: trace-cat" trace-cat --no-progress "$pallas"
