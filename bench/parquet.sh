#!/usr/bin/env bash
# The Parquet writer on a generated stream, side by side with the JSON Lines
# writer on the same stream (both to /dev/null): time and peak RSS; the
# file's size beside the TSV's; and DuckDB's `GROUP BY name` over the
# Parquet file and over the TSV. Rounds alternate the commands; each figure
# is the best round.
# Usage: bench/parquet.sh [ROWS] [ROUNDS]   (default 5 000 000 rows, 3 rounds)
# DuckDB comes from target/test-python (.ci/setup --tests) or python3.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rows=${1:-5000000}
rounds=${2:-3}
tsv=$(generated_stream "$rows")
parquet=bench/data/stream-$rows.parquet
target/release/trace-cat --no-progress -q "$tsv" -t parquet -o "$parquet"
echo "rows: $rows; tsv: $(stat -c %s "$tsv") bytes; parquet: $(stat -c %s "$parquet") bytes" \
  "($(awk -v t="$(stat -c %s "$tsv")" -v p="$(stat -c %s "$parquet")" 'BEGIN { printf "%.1f", t / p }')x smaller)"
names=("write jsonl (--json)" "write parquet (-t parquet)")
command_of() {
  case $1 in
    0) cmd=(target/release/trace-cat --no-progress -q --json "$tsv") ;;
    1) cmd=(target/release/trace-cat --no-progress -q -t parquet "$tsv") ;;
  esac
}
alternate "$rounds" 2
for i in 0 1; do
  awk -v n="${names[$i]}" -v ns="${best[$i]}" -v r="$rows" -v kb="${rss[$i]}" -v j="${best[0]}" \
    'BEGIN { printf "%s\t%.2f s\t%.2f M rows/s\tpeak RSS %.1f MiB\t%.2fx jsonl\n", n, ns / 1e9, r / (ns / 1e9) / 1e6, kb / 1024, j / ns }'
done
python=python3
[ -x target/test-python/bin/python3 ] && python=target/test-python/bin/python3
"$python" - "$tsv" "$parquet" "$rounds" <<'PY'
import sys, time, duckdb
tsv, parquet, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sources = {
    "tsv": f"read_csv('{tsv}', delim = '\t', header = true, quote = '', escape = '', "
           "types = {'time': 'BIGINT', 'end': 'BIGINT', 'value': 'VARCHAR'})",
    "parquet": f"'{parquet}'",
}
best = {}
for _ in range(rounds):
    for name, source in sources.items():
        con = duckdb.connect()
        start = time.perf_counter()
        con.sql(f"SELECT name, count(*), sum(time) FROM {source} GROUP BY name").fetchall()
        took = time.perf_counter() - start
        best[name] = min(best.get(name, took), took)
for name in sources:
    print(f"duckdb GROUP BY name ({name})\t{best[name]:.2f} s\t{best['tsv'] / best[name]:.1f}x tsv")
PY
