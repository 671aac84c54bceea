# Shared by the benchmark scripts: `measure NAME BYTES COMMAND...` runs the
# command 3 times with its output to /dev/null and prints the best wall time,
# the input's MB/s and that run's peak RSS.
measure() {
  local name=$1 bytes=$2; shift 2
  local best=0 rss=0
  for _ in 1 2 3; do
    local s e r
    s=$(date +%s%N)
    r=$( { /usr/bin/time -f %M "$@" > /dev/null; } 2>&1 | tail -1 )
    e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); rss=$r; fi
  done
  awk -v n="$name" -v ns="$best" -v b="$bytes" -v kb="$rss" \
    'BEGIN { printf "%s\t%.2f s\t%.0f MB/s\tpeak RSS %.1f MiB\n", n, ns / 1e9, b / (ns / 1e9) / 1e6, kb / 1024 }'
}
