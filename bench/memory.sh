#!/usr/bin/env bash
# Peak memory against input size, for the inputs whose memory once grew
# with something other than what the job needs: TRACE files (held whole:
# they need not be in time order), message halves waiting for a partner,
# rows held behind a collective one participant never reaches, and the
# hand-built STF files that once expanded a few KB of definitions into
# gigabytes (made by `cargo test --test stf_built`).
# Usage: bench/memory.sh [N]   (default 2000000: E lines, halves, rows)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
cargo build --release --quiet --bins
dir=bench/data/memory
mkdir -p "$dir"

# `rss COMMAND...`: its peak RSS in KiB (it may fail: a refused bomb).
rss() {
  /usr/bin/time -f %M -o "$dir/rss" "$@" > /dev/null 2>&1 || true
  tail -1 "$dir/rss"
}

# `peak NAME INPUT COMMAND...`: the command's peak RSS, the input's size and
# their ratio.
peak() {
  local name=$1 input=$2; shift 2
  local kb bytes
  kb=$(rss "$@")
  bytes=$(stat -c %s "$input")
  awk -v n="$name" -v kb="$kb" -v b="$bytes" \
    'BEGIN { printf "%s\tinput %.1f MB\tpeak RSS %.1f MiB\t%.1f x the input\n", n, b / 1e6, kb / 1024, kb * 1024 / b }'
}

# `per_item NAME COUNT INPUT COMMAND...`: as `peak`, and the peak RSS over
# COUNT items (halves, rows) in bytes each, above the same command's RSS
# on an input of none (`$dir/empty.tsv`).
per_item() {
  local name=$1 count=$2 input=$3; shift 3
  local kb base
  kb=$(rss "$@" "$input")
  base=$(rss "$@" "$dir/empty.tsv")
  awk -v n="$name" -v kb="$kb" -v base="$base" -v c="$count" \
    'BEGIN { printf "%s\tpeak RSS %.1f MiB\t%.0f bytes per item above an empty input\n", n, kb / 1024, (kb - base) * 1024 / c }'
}

header="kind	time	end	loc	cat	name	depth	peer	comm	tag	size	id	value	flags	attrs"
printf '%s\ncontainer\t\t\ta\tproc\tA\t\t\t\t\t\t\t\t\t\ncontainer\t\t\tb\tproc\tB\t\t\t\t\t\t\t\t\t\n' "$header" > "$dir/empty.tsv"

# TRACE: terse event lines, the shape with the least text per element.
etf=$dir/events-$n.etf
[ -s "$etf" ] || awk -v n="$n" 'BEGIN { print "TU NANOSECONDS"; for (i = 0; i < n; i++) printf "E %d %d\n", i, i * 7 }' > "$etf"
peak "TRACE, $n terse E lines (trace-cat)" "$etf" target/release/trace-cat --no-progress "$etf"
# The least text an element can have: numeric ids, one-digit times; and
# ids that are not numbers (each a string in the reader's index).
short=$dir/short-$n.etf
[ -s "$short" ] || awk -v n="$n" 'BEGIN { print "TU SECONDS"; for (i = 0; i < n; i++) printf "E %d %d\n", i, i % 10 }' > "$short"
peak "TRACE, $n E lines of one-digit times (trace-cat)" "$short" target/release/trace-cat --no-progress "$short"
named=$dir/named-$n.etf
[ -s "$named" ] || awk -v n="$n" 'BEGIN { print "TU NANOSECONDS"; for (i = 0; i < n; i++) printf "E e%d %d\n", i, i % 10 }' > "$named"
peak "TRACE, $n E lines of ids that are not numbers (trace-cat)" "$named" target/release/trace-cat --no-progress "$named"

# Halves waiting: sends whose receives never come.
sends=$dir/sends-$n.tsv
[ -s "$sends" ] || { cat "$dir/empty.tsv"; awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "send\t%d\t\ta\t\t\t\tb\tw\t%d\t8\t\t\t\t\n", i, i }'; } > "$sends"
per_item "trace-match, $n halves never received, each on its own channel" "$n" "$sends" target/release/trace-match -q --unmatched drop
one=$dir/sends-one-channel-$n.tsv
[ -s "$one" ] || { cat "$dir/empty.tsv"; awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "send\t%d\t\ta\t\t\t\tb\tw\t0\t8\t\t\t\t\n", i }'; } > "$one"
per_item "trace-match, $n halves never received, all on one channel" "$n" "$one" target/release/trace-match -q --unmatched drop

# Rows held behind a collective b never reaches (no --max-held).
held=$dir/held-$n.tsv
[ -s "$held" ] || {
  cat "$dir/empty.tsv"
  printf 'coll\t1\t2\ta\t\tbarrier\t\t\tw\t\t\t\t\t\t\ncoll\t1\t2\tb\t\tbarrier\t\t\tw\t\t\t\t\t\t\ncoll\t5\t6\ta\t\tbarrier\t\t\tw\t\t\t\t\t\t\n'
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "event\t%d\t\ta\t\te\t\t\t\t\t\t\t\t\t\n", 10 + i }'
} > "$held"
per_item "trace-match, $n rows held behind an incomplete collective" "$n" "$held" target/release/trace-match -q

# The STF definition bombs, as the tests build them.
cargo test --release --quiet --test stf_built > /dev/null
tmp=target/tmp
peak "STF, 1,000 communicators of all 2^32 willies" "$tmp/stf-comm-bomb/t.stf.dcl" target/release/trace-cat -q "$tmp/stf-comm-bomb/t.stf"
peak "STF, an array of 10,000 ids of a 60 KB string (refused)" "$tmp/stf-array-bomb/t.stf.dcl" target/release/trace-cat -q "$tmp/stf-array-bomb/t.stf"
