#!/usr/bin/env bash
# Pallas reader throughput (events/s) and memory on a generated trace.
# Usage: bench/pallas.sh [EVENTS_PER_THREAD] [THREADS] [CODEC]
#   (default 5 000 000 events x 2 threads, zstd)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
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
