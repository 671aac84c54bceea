#!/usr/bin/env python3
"""The independent check of the Chrome trace JSON reader: reads each file
with Python's `json` (times as exact decimals) and compares with the
stream `trace-cat` gives for it, per location: frames (`X`, `B`: `enter`
rows not made by the nesting rule), instants (`i`, `I`, `R`: `event` rows
that are neither another phase nor a leave with no frame open), counter
series samples (`C`), flow starts (`s`: `send`) and ends (`f`: `recv`); and
the first and last times (`ts`, `ts + dur`), exact.

    chrome_count.py TRACE_CAT FILE...

Prints one line per file; exits non-zero when one differs.
"""
import collections
import gzip
import re
import subprocess
import sys
from decimal import Decimal, ROUND_HALF_UP
import json


def events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(us):
    return (Decimal(str(us)) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP)


def expected(path):
    counts, times = collections.Counter(), []
    for e in events(path):
        ph, pid, tid = e.get("ph"), str(e.get("pid", "")), str(e.get("tid", ""))
        if ph == "M":
            continue
        thread = pid if tid == "" else f"{pid}/{tid}"
        times.append(ns(e["ts"]))
        if ph in ("X", "B"):
            counts[(thread, "frame")] += 1
            if ph == "X":
                times.append(ns(Decimal(str(e["ts"])) + Decimal(str(e.get("dur", 0)))))
        elif ph in ("i", "I", "R"):
            scope = e.get("s", "t")
            counts[("" if scope == "g" else pid if scope == "p" else thread, "instant")] += 1
        elif ph == "C":
            counts[(pid, "counter")] += len(e.get("args", {}))
        elif ph in ("s", "f"):
            counts[(thread, ph)] += 1
    return counts, min(times, default=None), max(times, default=None)


def read(trace_cat, path):
    out = subprocess.run([trace_cat, "-q", path], capture_output=True, text=True, check=True).stdout
    counts, times = collections.Counter(), []
    for line in out.splitlines()[1:]:
        c = line.split("\t")
        kind, loc, flags, attrs = c[0], re.sub(r"^rank[^/]*/", "", c[3]), c[13], c[14]
        if kind in ("meta", "container"):
            continue
        times += [int(t) for t in (c[1], c[2]) if t]
        if kind == "enter" and "S" not in flags:
            counts[(loc, "frame")] += 1
        elif kind == "event" and not re.search(r"(^|;)(ph|record)=", attrs):
            counts[(loc, "instant")] += 1
        elif kind == "counter":
            counts[(loc, "counter")] += 1
        elif kind in ("send", "recv"):
            counts[(loc, "s" if kind == "send" else "f")] += 1
    return counts, min(times, default=None), max(times, default=None)


wrong = 0
for path in sys.argv[2:]:
    want, got = expected(path), read(sys.argv[1], path)
    if want == got:
        print(f"ok {path}: {sum(want[0].values())} events, {want[1]} to {want[2]} ns")
        continue
    wrong += 1
    keys = set(want[0]) | set(got[0])
    diff = {k: (want[0][k], got[0][k]) for k in keys if want[0][k] != got[0][k]}
    print(f"DIFFERS {path}: (json, tracepipe) {diff}; times {want[1:]} {got[1:]}")
sys.exit(wrong)
