#!/usr/bin/env python3
"""Reads an OTF2 archive with the reference library's Python reader
(Debian's python3-otf2) and checks each location's events against the
number its definition states.

    read.py ANCHOR

Prints the number of events read; exits non-zero when a location holds
another number of events than its definition says.
"""
import collections
import sys

import otf2

counts = collections.Counter()
with otf2.reader.open(sys.argv[1]) as trace:
    defined = {location: location.number_of_events for location in trace.definitions.locations}
    for location, _event in trace.events:
        counts[location] += 1
wrong = [(loc.name, n, counts[loc]) for loc, n in defined.items() if counts[loc] != n]
if wrong:
    sys.exit(f"events per location (name, defined, read): {wrong}")
print(sum(counts.values()))
