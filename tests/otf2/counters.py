#!/usr/bin/env python3
"""Each function's hardware-counter changes in an OTF2 archive, read with the
reference library's Python reader (Debian's python3-otf2): the independent
check of `trace-stat profile --counters`.

    counters.py ANCHOR

Prints `name counter frames inclusive exclusive` per function and counter
(tab-separated, no header, sorted): a frame counts for a counter when the
counter has a sample on its location at the time of its enter and of its
leave; its inclusive change is the difference, its exclusive change that
less its direct children's inclusive changes.
"""
import collections
import sys

import otf2

totals = collections.defaultdict(lambda: [0, 0, 0])
latest = collections.defaultdict(dict)  # location -> counter -> (time, value)
stacks = collections.defaultdict(list)  # location -> [(region, enter samples, children)]


def samples_at(loc, time):
    return {name: value for name, (t, value) in latest[loc].items() if t == time}


with otf2.reader.open(sys.argv[1]) as trace:
    for loc, event in trace.events:
        if isinstance(event, otf2.events.Metric):
            metric = event.metric
            members = metric.members if hasattr(metric, "members") else metric.metric_class.members
            for member, value in zip(members, event.values):
                latest[loc][member.name] = (event.time, value)
        elif isinstance(event, otf2.events.Enter):
            stacks[loc].append((event.region.name, samples_at(loc, event.time), collections.Counter()))
        elif isinstance(event, otf2.events.Leave):
            name, entered, children = stacks[loc].pop()
            left = samples_at(loc, event.time)
            for counter in entered.keys() & left.keys():
                change = left[counter] - entered[counter]
                row = totals[(name, counter)]
                row[0] += 1
                row[1] += change
                row[2] += change - children[counter]
                if stacks[loc]:
                    stacks[loc][-1][2][counter] += change
for (name, counter), (frames, inclusive, exclusive) in sorted(totals.items()):
    print(f"{name}\t{counter}\t{frames}\t{inclusive}\t{exclusive}")
