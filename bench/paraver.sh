#!/usr/bin/env bash
# Paraver read and write on the generated stream, side by side with the
# stream's own TSV on the same rows: `bench/paraver.sh [ROWS] [ROUNDS]`
# (default 2 000 000 rows, 3 rounds). The stream is written as a Paraver
# trace once; that trace read back as TSV is the baseline, so both sides
# hold the same rows. Rounds alternate the commands; each figure is the
# best round (wall time, rows per second, that run's peak RSS).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-2000000}
rounds=${2:-3}
tsv=$(generated_stream "$rows")
bin=target/release
prv=bench/data/paraver-$rows.prv
same=bench/data/paraver-$rows.tsv
"$bin/trace-cat" --no-progress -q -t paraver -o "$prv" "$tsv"
"$bin/trace-cat" --no-progress -q -o "$same" "$prv"
cat "$prv" "$same" > /dev/null
data_rows=$(grep -cv '^meta\|^container\|^kind' "$same")
echo "rows: $rows generated, $data_rows as Paraver keeps them; .prv: $(stat -c %s "$prv") bytes; TSV: $(stat -c %s "$same") bytes"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
names=("read TSV (trace-filter -k signal)" "read Paraver (trace-filter -k signal)"
       "TSV -> TSV (trace-cat)" "Paraver -> TSV (trace-cat)" "TSV -> Paraver (trace-cat -t paraver)")
command_of() {
  case $1 in
    0) cmd=("$bin/trace-filter" --no-progress -q -k signal "$same") ;;
    1) cmd=("$bin/trace-filter" --no-progress -q -k signal "$prv") ;;
    2) cmd=("$bin/trace-cat" --no-progress -q "$same") ;;
    3) cmd=("$bin/trace-cat" --no-progress -q "$prv") ;;
    4) cmd=("$bin/trace-cat" --no-progress -q -t paraver -o "$out/w.prv" "$same") ;;
  esac
}
alternate "$rounds" 5
for i in 0 1 2 3 4; do
  base=$(( i == 1 ? 0 : (i >= 3 ? 2 : i) ))
  awk -v n="${names[$i]}" -v ns="${best[$i]}" -v r="$data_rows" -v kb="${rss[$i]}" -v b="${best[$base]}" \
    'BEGIN { printf "%-40s %.2f s\t%.2f M rows/s\tpeak RSS %.1f MiB\t%.2fx TSV\n", n, ns / 1e9, r / (ns / 1e9) / 1e6, kb / 1024, b / ns }'
done
