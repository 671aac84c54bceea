#!/usr/bin/env bash
# Instructions each thread does (callgrind, which counts the same on a busy
# host as on a quiet one), for a command run with two threads: the reading
# thread's, less the pool's jobs it ran itself, and the jobs' wherever they
# ran (which thread runs a job varies from run to run; the sums do not).
# Usage: bench/threads.sh FILE BIN [ARGS...]
#   e.g. bench/threads.sh bench/data/paje-200k.paje target/release/trace-cat
set -euo pipefail
file=$1 bin=$2
shift 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A command that fails (a truncated trace's incomplete links) still counts
# what it did, but says so.
valgrind --tool=callgrind --separate-threads=yes \
  --callgrind-out-file="$out/cg.%p" "$bin" --threads 2 --no-progress "$@" "$file" \
  > /dev/null 2> "$out/stderr" || { echo "the command failed:" >&2; grep -v '^==' "$out/stderr" >&2; }
# A thread's instructions (0 for a worker the pool never started).
total() { [ -n "$1" ] && grep -m1 '^summary' "$1" | cut -d' ' -f2 || echo 0; }
# The jobs a thread ran itself are its `Task::run_here` calls, counted
# inclusively (the largest of callgrind's lines for it: one per file the
# code is inlined from).
jobs_in() {
  # None (grep finds no line) when the worker ran every job: 0, not a
  # failure that would end the script silently.
  callgrind_annotate --inclusive=yes "$1" 2> /dev/null |
    { grep 'tracepipe::pool::Task<T>::run_here' || true; } |
    awk '{ gsub(",", "", $1); if ($1 + 0 > m) m = $1 + 0 } END { print m + 0 }'
}
main=$(ls "$out"/cg.*-01)
worker=$(ls "$out"/cg.*-02 2> /dev/null || true)
on_main=$(jobs_in "$main")
awk -v m="$(total "$main")" -v j="$on_main" -v w="$(total "$worker")" 'BEGIN {
  printf "reading thread\t%.0f M\njobs\t%.0f M (%.0f M of them on the reading thread)\n",
    (m - j) / 1e6, (w + j) / 1e6, j / 1e6
}'
