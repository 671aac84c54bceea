# Shared by the benchmark scripts: `measure NAME BYTES COMMAND...` runs the
# command 3 times with its output to /dev/null and prints the best wall time,
# the input's MB/s and that run's peak RSS.
measure() {
  local name=$1 bytes=$2; shift 2
  measure_rate "$name" "$bytes" MB/s "$@"
}

# `measure_rate NAME COUNT UNIT COMMAND...`: as `measure`, with COUNT things
# (bytes, events...) per run shown in millions per second as UNIT.
measure_rate() {
  local name=$1 count=$2 unit=$3; shift 3
  local best=0 rss=0
  for _ in 1 2 3; do
    local s e r
    s=$(date +%s%N)
    r=$( { /usr/bin/time -f %M "$@" > /dev/null; } 2>&1 | tail -1 )
    e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); rss=$r; fi
  done
  awk -v n="$name" -v ns="$best" -v b="$count" -v u="$unit" -v kb="$rss" \
    'BEGIN { printf "%s\t%.2f s\t%.1f %s\tpeak RSS %.1f MiB\n", n, ns / 1e9, b / (ns / 1e9) / 1e6, u, kb / 1024 }'
}

# `generated_stream ROWS`: builds the commands and gen-stream, writes
# bench/data/stream-ROWS.tsv once, warms the page cache and prints its path.
generated_stream() {
  local rows=$1 tsv=bench/data/stream-$1.tsv
  mkdir -p bench/data
  cargo build --release --quiet --bins --example gen-stream
  [ -s "$tsv" ] || target/release/examples/gen-stream "$rows" > "$tsv"
  cat "$tsv" > /dev/null
  echo "$tsv"
}
