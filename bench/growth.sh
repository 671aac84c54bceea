#!/usr/bin/env bash
# Growth check: each input shape at N and 2N; the time ratio should stay near
# 2 (linear), never near 4 (quadratic). Shapes that made the readers
# quadratic before: Pajé links pending while many containers close, one
# container with many state types, and streams with many sequentially named
# locations. Usage: bench/growth.sh [N]   (default 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
cargo build --release --quiet --bins
dir=bench/data/scaling
mkdir -p "$dir"
header=tests/data/paje/header.paje

gen() { # shape count -> file
  python3 - "$1" "$2" <<'PY'
import sys
shape, n = sys.argv[1], int(sys.argv[2])
out = sys.stdout
if shape.startswith("paje"):
    out.write(open("tests/data/paje/header.paje").read())
    out.write("0 M 0 Machine\n0 T M Thread\n4 L 0 M M Link\n6 0 hub M 0 hub\n")
if shape == "paje-pending-links":
    # n links started and never ended, then n short-lived containers.
    for i in range(n):
        out.write(f"15 1 0 L hub v k{i} 1\n")
    for i in range(n):
        out.write(f"6 2 c{i} M 0 c{i}\n7 3 M c{i}\n")
elif shape == "paje-many-types":
    for i in range(n):
        out.write(f"2 S{i} M S{i}\n")
    for i in range(n):
        out.write(f"11 1 hub S{i} x\n")
elif shape.startswith("stream"):
    names = {"stream-t": lambda i: f"t{i}", "stream-c": lambda i: f"c{i}",
             "stream-PT": lambda i: f"P{i // 64}T{i % 64}"}[shape]
    cols = "kind time end loc cat name depth peer comm tag size id value flags attrs".split()
    out.write("\t".join(cols) + "\n")
    out.write("meta\t\t\t\t\tformat\t\t\t\t\t\t\ttracepipe-stream/1\t\t\n")
    for i in range(n):
        out.write(f"container\t\t\t{names(i)}\t\t\t\t\t\t\t\t\t\t\t\n")
    for i in range(n):
        out.write(f"event\t{i}\t\t{names(i)}\t\te\t\t\t\t\t\t\t\t\t\n")
PY
}

seconds() { # best of 3, in seconds
  local best=0
  for _ in 1 2 3; do
    local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s%N)
    if [ "$best" = 0 ] || [ $((e - s)) -lt "$best" ]; then best=$((e - s)); fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.3f", ns / 1e9 }'
}

for shape in paje-pending-links paje-many-types stream-t stream-c stream-PT; do
  ext=tsv; case $shape in paje*) ext=paje;; esac
  for k in "$n" $((2 * n)); do
    [ -s "$dir/$shape-$k.$ext" ] || gen "$shape" "$k" > "$dir/$shape-$k.$ext"
  done
  extra=(); [ "$shape" = paje-pending-links ] && extra=(--ignore-incomplete-links)
  a=$(seconds target/release/trace-cat "${extra[@]}" "$dir/$shape-$n.$ext")
  b=$(seconds target/release/trace-cat "${extra[@]}" "$dir/$shape-$((2 * n)).$ext")
  awk -v s="$shape" -v n="$n" -v a="$a" -v b="$b" \
    'BEGIN { printf "%-20s N=%d %6.3f s  2N %6.3f s  ratio %.2f\n", s, n, a, b, b / a }'
done
