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

# `otf2_side_by_side ARCHIVE EVENTS ROUNDS`: otf2-print, reading alone
# (trace-filter -k signal, which writes nothing) and conversion to TSV, each
# with the default threads and with one, on ARCHIVE; rounds alternate the
# commands, each figure is the best round with that run's peak RSS, and the
# ratio to otf2-print. Needs the release build.
otf2_side_by_side() {
  local archive=$1 events=$2 rounds=$3
  local names=("otf2-print" "trace-filter -k signal" "trace-filter -k signal --threads 1"
               "trace-cat (TSV)" "trace-cat (TSV) --threads 1")
  local best=(0 0 0 0 0) rss=(0 0 0 0 0) cmd s e r i
  for _ in $(seq "$rounds"); do
    for i in 0 1 2 3 4; do
      case $i in
        0) cmd=(otf2-print "$archive") ;;
        1) cmd=(target/release/trace-filter --no-progress -q -k signal "$archive") ;;
        2) cmd=(target/release/trace-filter --no-progress -q -k signal --threads 1 "$archive") ;;
        3) cmd=(target/release/trace-cat --no-progress -q "$archive") ;;
        4) cmd=(target/release/trace-cat --no-progress -q --threads 1 "$archive") ;;
      esac
      s=$(date +%s%N)
      r=$( { /usr/bin/time -f %M "${cmd[@]}" > /dev/null; } 2>&1 | tail -1 )
      e=$(date +%s%N)
      if [ "${best[$i]}" = 0 ] || [ $((e - s)) -lt "${best[$i]}" ]; then
        best[$i]=$((e - s)); rss[$i]=$r
      fi
    done
  done
  for i in 0 1 2 3 4; do
    awk -v n="${names[$i]}" -v ns="${best[$i]}" -v ref="${best[0]}" -v ev="$events" -v kb="${rss[$i]}" \
      'BEGIN { printf "  %-36s %8.1f ms  %6.1f M events/s  %5.1f x otf2-print  peak RSS %.1f MiB\n",
               n, ns / 1e6, ev / (ns / 1e9) / 1e6, ref / ns, kb / 1024 }'
  done
}

# `alternate ROUNDS N`: runs commands 0..N-1 in turn, ROUNDS times, each
# with its output to /dev/null; `command_of I` (defined by the caller)
# sets the array `cmd` to command I. Leaves in `best[I]` its best wall time
# (ns) and in `rss[I]` that run's peak RSS (KiB).
alternate() {
  local rounds=$1 n=$2 i s e r
  best=() rss=()
  for i in $(seq 0 $((n - 1))); do best[$i]=0; rss[$i]=0; done
  for _ in $(seq "$rounds"); do
    for i in $(seq 0 $((n - 1))); do
      command_of "$i"
      s=$(date +%s%N)
      r=$( { /usr/bin/time -f %M "${cmd[@]}" > /dev/null; } 2>&1 | tail -1 )
      e=$(date +%s%N)
      if [ "${best[$i]}" = 0 ] || [ $((e - s)) -lt "${best[$i]}" ]; then best[$i]=$((e - s)); rss[$i]=$r; fi
    done
  done
}
