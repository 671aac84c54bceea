"""Checks tracepipe's Parquet files with DuckDB and Polars, independently of
tracepipe's own reader (tests/parquet.rs runs it).

  rows FILE.parquet STREAM.tsv         the file's rows, typed, equal the stream's
  partitioned DIR COLUMN STREAM.tsv    the folder's rows, once each, in `seq` order
  copy STREAM.tsv OUT.parquet WHERE    DuckDB writes the stream's rows WHERE as Parquet
  queries DOC.md DIR                   docs/sql.md's queries in DuckDB and Polars
"""
import os
import re
import sys

import duckdb

INTS = {"time", "end", "depth", "tag", "size"}
ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}


def unescape(field):
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\":
            out.append(ESCAPES[field[i + 1]])
            i += 2
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def stream_rows(path):
    """The stream's header and rows, fields typed as the Parquet file types them."""
    with open(path, encoding="utf-8", newline="\n") as f:
        lines = f.read().split("\n")
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        row = []
        for name, field in zip(header, line.split("\t")):
            value = unescape(field) if field else None
            row.append(int(value) if value is not None and name in INTS else value)
        rows.append(tuple(row))
    return header, rows


def check_types(con, source, header):
    types = dict((r[0], r[1]) for r in con.sql(f"DESCRIBE SELECT * FROM {source}").fetchall())
    for name in ("time", "end", "depth", "tag"):
        assert types[name] == "BIGINT", (name, types[name])
    assert types["size"] == "UBIGINT", types["size"]
    for name in header:
        if name not in INTS:
            assert types[name] == "VARCHAR", (name, types[name])


def quoted(header):
    return ", ".join('"' + n + '"' for n in header)


def rows(parquet, tsv):
    header, want = stream_rows(tsv)
    con = duckdb.connect()
    source = f"read_parquet('{parquet}', file_row_number = true)"
    check_types(con, source, header)
    got = con.sql(f"SELECT {quoted(header)} FROM {source} ORDER BY file_row_number").fetchall()
    assert got == want, first_difference(got, want)
    print(f"ok {len(got)} rows")


def partitioned(folder, column, tsv):
    header, want = stream_rows(tsv)
    con = duckdb.connect()
    source = (
        f"read_parquet('{folder}/**/*.parquet', hive_partitioning = true, "
        f"hive_types = {{'{column}': VARCHAR}})"
    )
    check_types(con, source, header)
    got = con.sql(f"SELECT {quoted(header)} FROM {source} ORDER BY seq").fetchall()
    seqs = [r[0] for r in con.sql(f"SELECT seq FROM {source} ORDER BY seq").fetchall()]
    assert seqs == list(range(len(want))), "seq is not each row's place, once"
    assert got == want, first_difference(got, want)
    print(f"ok {len(got)} rows")


def first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"row {i}: {g} != {w}"
    return f"{len(got)} rows, {len(want)} wanted"


def copy(tsv, out, where):
    con = duckdb.connect()
    con.sql(
        f"COPY (SELECT * FROM read_csv('{tsv}', delim = '\t', header = true, quote = '', "
        f"escape = '', types = {{'time': 'BIGINT', 'end': 'BIGINT', 'value': 'VARCHAR'}}) "
        f"WHERE {where}) TO '{out}' (FORMAT parquet)"
    )


def blocks(doc, language):
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```" + language + r"\n(.*?)```", text, re.S)


def queries(doc, folder):
    import polars as pl

    os.chdir(folder)
    sql = blocks(doc, "sql")
    python = blocks(doc, "python")
    assert len(sql) == len(python) == 3, (len(sql), len(python))
    for query, code in zip(sql, python):
        duck = duckdb.sql(query).fetchall()
        scope = {}
        exec(code, scope)
        frame = next(v for v in scope.values() if isinstance(v, pl.DataFrame))
        polars_rows = [tuple(r) for r in frame.rows()]
        assert duck == polars_rows, f"DuckDB {duck} != Polars {polars_rows}"
        print("==")
        for row in duck:
            print("\t".join("" if v is None else str(v) for v in row))


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    {"rows": rows, "partitioned": partitioned, "copy": copy, "queries": queries}[mode](*args)
