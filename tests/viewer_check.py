#!/usr/bin/env python3
"""Checks a viewer export the way a viewer reads it, independently of tracepipe.

    viewer_check.py chrome FILE...     # Chrome Trace Event JSON (json module)
    viewer_check.py perfetto FILE...   # Perfetto protobuf (the `perfetto` package's
                                     # compiled trace protos, with `protobuf`)

Both are decoded into one list of events per track, then checked alike:
begin/end balanced and nested per track, their times never decreasing; no two
slices of a track overlapping without nesting; every flow start has its end
(and the reverse), each bound to a slice at its time on its track; every track
named. For Perfetto also: every track uuid declared before use, every interned
string defined before it is referenced. Prints a JSON summary of each file, one
per line; exits 1 with the problems found.
"""

import json
import sys
from collections import defaultdict
from decimal import Decimal

PERFETTO_TIME_BIAS = 10**18


class Trace:
    def __init__(self):
        self.problems = []
        self.names = {}  # track -> name
        self.events = defaultdict(list)  # track -> [(ph, ts, dur, name)]
        self.flow_starts = {}  # id -> (track, ts)
        self.flow_ends = {}
        self.counters = 0
        self.markers = 0

    def problem(self, msg):
        if len(self.problems) < 20:
            self.problems.append(msg)

    def flow(self, table, which, fid, track, ts):
        if fid in table:
            self.problem(f"flow {fid} has two {which}s")
        table[fid] = (track, ts)

    def check(self):
        slices = 0
        instants = 0
        for track, events in self.events.items():
            stack = []
            intervals = []
            last_be = None
            for ph, ts, dur, name in events:
                if ph in "BE":
                    if last_be is not None and ts < last_be:
                        self.problem(f"track {track}: {ph} at {ts} after {last_be}")
                    last_be = ts
                if ph == "B":
                    if not name:
                        self.problem(f"track {track}: slice without a name at {ts}")
                    stack.append(ts)
                elif ph == "E":
                    if not stack:
                        self.problem(f"track {track}: end at {ts} with no slice open")
                        continue
                    start = stack.pop()
                    intervals.append((start, ts))
                    slices += 1
                elif ph == "X":
                    if dur < 0:
                        self.problem(f"track {track}: negative duration at {ts}")
                    if not name:
                        self.problem(f"track {track}: slice without a name at {ts}")
                    intervals.append((ts, ts + dur))
                    slices += 1
                elif ph == "I":
                    instants += 1
            if stack:
                self.problem(f"track {track}: {len(stack)} slices never end")
            self.check_nesting(track, intervals)
            if track not in self.names or not self.names[track]:
                self.problem(f"track {track} has events but no name")
        for fid, (track, ts) in self.flow_starts.items():
            if fid not in self.flow_ends:
                self.problem(f"flow {fid} starts at {ts} on {track} and never ends")
        for fid in self.flow_ends:
            if fid not in self.flow_starts:
                self.problem(f"flow {fid} ends but never starts")
        for table in (self.flow_starts, self.flow_ends):
            for fid, (track, ts) in table.items():
                if not self.bound(track, ts):
                    self.problem(f"flow {fid}: no slice at {ts} on {track} to bind to")
        return {
            "slices": slices - self.markers,
            "instants": instants,
            "flows": len(self.flow_starts),
            "counters": self.counters,
            "tracks": len(self.names),
        }

    def check_nesting(self, track, intervals):
        intervals.sort(key=lambda iv: (iv[0], -iv[1]))
        open_ends = []
        for start, end in intervals:
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                self.problem(
                    f"track {track}: slice {start}..{end} overlaps one ending at {open_ends[-1]}"
                )
                return
            open_ends.append(end)

    def bound(self, track, ts):
        for ph, t, dur, _ in self.events.get(track, []):
            if ph in "XI" and t <= ts <= t + dur:
                return True
        return False


def ns(value):
    """Chrome µs (a JSON number) to integer ns, exactly."""
    return int(Decimal(str(value)) * 1000)


def read_chrome(path):
    t = Trace()
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        t.problem("not the JSON object form with a traceEvents list")
        return t
    if doc.get("displayTimeUnit") != "ns":
        t.problem("displayTimeUnit is not ns")
    process_names = {}
    last_slice = None
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        pid = ev.get("pid")
        if ph == "M":
            name = ev.get("args", {}).get("name")
            if ev.get("name") == "process_name":
                process_names[pid] = name
            elif ev.get("name") == "thread_name":
                t.names[(pid, ev.get("tid"))] = name
            continue
        ts = ns(ev["ts"])
        if ph == "C":
            t.counters += 1
            track = (pid, "counter", ev.get("name"))
            t.names[track] = ev.get("name")
            if not isinstance(ev.get("args", {}).get("value"), (int, Decimal)):
                t.problem(f"counter without a numeric value at {ts}")
            continue
        track = (pid, ev.get("tid"))
        name = ev.get("name")
        if ph == "X":
            t.events[track].append(("X", ts, ns(ev["dur"]), name))
            last_slice = (track, ts, ev.get("dur"))
        elif ph in ("B", "E"):
            t.events[track].append((ph, ts, 0, name))
        elif ph == "i":
            t.events[track].append(("I", ts, 0, name))
        elif ph in ("s", "f"):
            if ph == "f" and ev.get("bp") != "e":
                t.problem(f"flow end {ev.get('id')} without bp=e")
            if last_slice == (track, ts, 0):
                t.markers += 1
            table = t.flow_starts if ph == "s" else t.flow_ends
            t.flow(table, "start" if ph == "s" else "end", ev["id"], track, ts)
        else:
            t.problem(f"unexpected phase {ph!r}")
    for track in list(t.events) + [k for k in t.names if k[1] == "counter"]:
        if track[0] not in process_names or not process_names[track[0]]:
            t.problem(f"pid {track[0]} has events but no process_name")
    return t


def read_perfetto(path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    t = Trace()
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    TE = pb.TrackEvent
    declared = {}
    counter_tracks = set()
    names, cats = {}, {}
    cleared = False
    for packet in trace.packet:
        if not packet.HasField("trusted_packet_sequence_id"):
            t.problem("packet without a sequence id")
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            if d.HasField("parent_uuid") and d.parent_uuid not in declared:
                t.problem(f"track {d.uuid} under undeclared parent {d.parent_uuid}")
            declared[d.uuid] = d.name
            t.names[d.uuid] = d.name
            if d.HasField("counter"):
                counter_tracks.add(d.uuid)
            continue
        if not packet.HasField("track_event"):
            continue
        flags = packet.sequence_flags
        if flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            names, cats, cleared = {}, {}, True
        if flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE and not cleared:
            t.problem("packet needs incremental state before any was cleared")
        for e in packet.interned_data.event_names:
            names[e.iid] = e.name
        for e in packet.interned_data.event_categories:
            cats[e.iid] = e.name
        ev = packet.track_event
        ts = packet.timestamp - PERFETTO_TIME_BIAS
        track = ev.track_uuid
        if track not in declared:
            t.problem(f"event on undeclared track {track}")
        name = None
        if ev.HasField("name_iid"):
            if ev.name_iid not in names:
                t.problem(f"name iid {ev.name_iid} used before it is interned")
            name = names.get(ev.name_iid)
        for iid in ev.category_iids:
            if iid not in cats:
                t.problem(f"category iid {iid} used before it is interned")
        if ev.type == TE.TYPE_SLICE_BEGIN:
            t.events[track].append(("B", ts, 0, name))
        elif ev.type == TE.TYPE_SLICE_END:
            t.events[track].append(("E", ts, 0, None))
        elif ev.type == TE.TYPE_INSTANT:
            if ev.flow_ids or ev.terminating_flow_ids:
                t.events[track].append(("X", ts, 0, name))
                t.markers += 1
            else:
                t.events[track].append(("I", ts, 0, name))
            for fid in ev.flow_ids:
                t.flow(t.flow_starts, "start", fid, track, ts)
            for fid in ev.terminating_flow_ids:
                t.flow(t.flow_ends, "end", fid, track, ts)
        elif ev.type == TE.TYPE_COUNTER:
            t.counters += 1
            if track not in counter_tracks:
                t.problem(f"counter sample on track {track}, not a counter track")
        else:
            t.problem(f"unexpected event type {ev.type}")
    return t


def main():
    kind, paths = sys.argv[1], sys.argv[2:]
    failed = False
    for path in paths:
        trace = read_chrome(path) if kind == "chrome" else read_perfetto(path)
        summary = trace.check()
        if trace.problems:
            print(f"{path}:", *trace.problems, sep="\n  ", file=sys.stderr)
            failed = True
        print(json.dumps(summary, sort_keys=True))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
