#!/usr/bin/env bash
# Pallas reader throughput (events/s) and memory on a generated trace.
# Usage: bench/pallas.sh [EVENTS_PER_THREAD] [THREADS] [CODEC]
#   (default 5 000 000 events x 2 threads, zstd)
#
# The profile from the grammar: bench/pallas.sh profile [ITERATIONS]
#   `trace-stat profile DIR` (summed from the per-sequence durations) beside
#   the same report from the rows (`--loc '*'`, which selects every
#   location and so reads the rows), on the write_benchmark shape and on
#   nested calls (default 1 000 000 iterations), written with -t pallas.
#
# The writer (-t pallas): bench/pallas.sh write [ROWS] [ITERATIONS]
#   Folder size next to the TSV and its zstd, writing time, MB/s of TSV and
#   peak RSS, per codec, beside -t otf2, on the generated stream of ROWS
#   rows (default 10 000 000), and on the shape of Pallas's own
#   write_benchmark (2 threads x ITERATIONS x 2 functions, logical clock;
#   default 1 000 000). With PALLAS_WRITE_BENCHMARK naming Pallas's
#   write_benchmark_CPP (built from Pallas's sources, never committed), its
#   own trace of the same events is measured too.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

# `write_benchmark_shape ITERATIONS`: the events of Pallas's own
# write_benchmark -p 1 -f 2 -t 2 -l as a stream (each thread calls
# function_0 and function_1 in turn, one tick per event), written once;
# prints its path.
write_benchmark_shape() {
  local n=$1 shape=bench/data/pallas-write-benchmark-$1.tsv
  mkdir -p bench/data
  if [ ! -s "$shape" ]; then
    awk -v n="$n" 'BEGIN {
        OFS = "\t"
        print "kind", "time", "end", "loc", "cat", "name", "depth", "peer", "comm", "tag", "size", "id", "value", "flags", "attrs"
        print "meta", "", "", "", "", "format", "", "", "", "", "", "", "tracepipe-stream/1", "", ""
        print "container", "", "", "main", "process", "Main process", "", "", "", "", "", "", "", "", ""
        for (t = 0; t < 2; t++) {
          print "container", "", "", "thread_" t, "thread", "thread_" t, "", "main", "", "", "", "", "", "", ""
        }
        for (i = 0; i < 2 * n; i++) {
          f = "function_" (i % 2)
          for (t = 0; t < 2; t++) {
            print "enter", 2 * i + 1, "", "thread_" t, "", f, "0", "", "", "", "", "", "", "", ""
          }
          for (t = 0; t < 2; t++) {
            print "leave", 2 * i + 2, "", "thread_" t, "", f, "0", "", "", "", "", "", "", "", ""
          }
        }
      }' > "$shape"
  fi
  echo "$shape"
}

# `nested_shape ITERATIONS`: 2 threads each running main { ITERATIONS x
# { compute { 3 x kernel }, io } } with irregular times (the same on both
# threads, so the rows stay in time order), written once; prints its path.
nested_shape() {
  local n=$1 shape=bench/data/pallas-nested-$1.tsv
  mkdir -p bench/data
  if [ ! -s "$shape" ]; then
    awk -v n="$n" 'function both(k, f, depth) {
        for (t = 0; t < 2; t++) print k, time, "", "thread_" t, "", f, depth, "", "", "", "", "", "", "", ""
      }
      BEGIN {
        OFS = "\t"
        print "kind", "time", "end", "loc", "cat", "name", "depth", "peer", "comm", "tag", "size", "id", "value", "flags", "attrs"
        print "meta", "", "", "", "", "format", "", "", "", "", "", "", "tracepipe-stream/1", "", ""
        for (t = 0; t < 2; t++) print "container", "", "", "thread_" t, "thread", "thread_" t, "", "", "", "", "", "", "", "", ""
        srand(7)
        time = 0
        both("enter", "main", 0)
        for (i = 0; i < n; i++) {
          time += 1 + int(rand() * 50); both("enter", "compute", 1)
          for (k = 0; k < 3; k++) {
            time += 1 + int(rand() * 50); both("enter", "kernel", 2)
            time += 100 + int(rand() * 900); both("leave", "kernel", 2)
          }
          time += 1 + int(rand() * 50); both("leave", "compute", 1)
          time += 1 + int(rand() * 50); both("enter", "io", 1)
          time += 10 + int(rand() * 90); both("leave", "io", 1)
        }
        time += 1; both("leave", "main", 0)
      }' > "$shape"
  fi
  echo "$shape"
}

# `write_side_by_side NAME TSV`: sizes and writing times of TSV as Pallas.
write_side_by_side() {
  local name=$1 tsv=$2 out
  out=$(mktemp -d)
  local bytes; bytes=$(stat -c %s "$tsv")
  echo "== $name: $(( $(wc -l < "$tsv") - 1 )) rows, TSV $bytes bytes, TSV.zst (zstd -3) $(zstd -q -3 -c "$tsv" | wc -c) bytes"
  for codec in zstd none masking zstd-masking; do
    measure "-t pallas --pallas-codec $codec" "$bytes" \
      target/release/trace-cat --no-progress -t pallas --pallas-codec "$codec" -o "$out/p-$codec" "$tsv"
    echo "  folder: $(du -sb --apparent-size "$out/p-$codec" | cut -f1) bytes in $(find "$out/p-$codec" -type f | wc -l) files"
  done
  measure "-t otf2" "$bytes" target/release/trace-cat --no-progress -t otf2 -o "$out/o.otf2" "$tsv"
  echo "  archive: $(du -sb --apparent-size "$out/o.otf2" "$out/o" "$out/o.def" | awk '{s += $1} END {print s}') bytes"
  measure "read back (trace-cat DIR)" "$bytes" target/release/trace-cat --no-progress "$out/p-zstd"
  rm -rf "$out"
}

if [ "${1:-}" = write ]; then
  rows=${2:-10000000}
  iterations=${3:-1000000}
  write_side_by_side "generated stream" "$(generated_stream "$rows")"
  shape=$(write_benchmark_shape "$iterations")
  write_side_by_side "write_benchmark shape" "$shape"
  if [ -n "${PALLAS_WRITE_BENCHMARK:-}" ]; then
    work=$(mktemp -d)
    s=$(date +%s%N)
    r=$( { cd "$work" && /usr/bin/time -f %M "$PALLAS_WRITE_BENCHMARK" -n "$iterations" -f 2 -t 2 -p 1 -l > /dev/null; } 2>&1 | tail -1 )
    e=$(date +%s%N)
    awk -v ns=$((e - s)) -v kb="$r" 'BEGIN { printf "Pallas write_benchmark_CPP\t%.2f s\tpeak RSS %.1f MiB\n", ns / 1e9, kb / 1024 }'
    echo "  folder: $(du -sb --apparent-size "$work"/*_trace | cut -f1) bytes"
    rm -rf "$work"
  fi
  exit 0
fi
if [ "${1:-}" = profile ]; then
  iterations=${2:-1000000}
  cargo build --release --quiet --bins
  for shape in "$(write_benchmark_shape "$iterations")" "$(nested_shape "$iterations")"; do
    dir=${shape%.tsv}.pallas-dir
    [ -d "$dir" ] || target/release/trace-cat --no-progress -t pallas -o "$dir" "$shape"
    events=$(grep -c '^enter\|^leave' "$shape")
    echo "== $shape as Pallas: $events events, $(du -sb "$dir" | cut -f1) bytes"
    cmp <(target/release/trace-stat profile "$dir") <(target/release/trace-stat profile --loc '*' "$dir")
    measure_rate "profile from the grammar" "$events" "M events/s" target/release/trace-stat --no-progress profile "$dir"
    measure_rate "profile from the rows (--loc '*')" "$events" "M events/s" target/release/trace-stat --no-progress profile --loc '*' "$dir"
    measure_rate "rows alone (trace-cat > /dev/null)" "$events" "M events/s" target/release/trace-cat --no-progress "$dir"
  done
  exit 0
fi
events=${1:-5000000}
threads=${2:-2}
codec=${3:-zstd}
mkdir -p bench/data
features=()
if [ "$codec" = zfp ]; then features=(--features zfp); fi
cargo build --release --quiet --bins --example gen-pallas "${features[@]}"
dir=bench/data/pallas-$events-$threads-$codec
[ -d "$dir" ] || target/release/examples/gen-pallas "$dir" "$events" "$threads" "$codec"
total=$(target/release/trace-cat --no-progress "$dir" | grep -cv '^meta\|^container\|^kind')
echo "trace: $dir, $(du -sb "$dir" | cut -f1) bytes on disk, $total events"
measure_rate "read (trace-cat > /dev/null)" "$total" "M events/s" target/release/trace-cat --no-progress "$dir"
measure_rate "read as JSON Lines (trace-cat --json)" "$total" "M events/s" target/release/trace-cat --no-progress --json "$dir"
