#!/usr/bin/env python3
"""Reads a Pallas trace with the reference library's Python bindings
(PyPI's pallas-trace) and prints every event it reads, one per line:

    THREAD NAME <TAB> TIME <TAB> RECORD <TAB> WHAT

WHAT is the region's name (ENTER, LEAVE), the string (GENERIC), the
fields of an MPI record as `tag=T len=L` (plus `req=R` for the
nonblocking ones), of a collective's end as `op=O sent=S recv=R`, a
fork's `nthreads=N`, a lock's `lock=L`, an OpenMP task's `task=T`, a
request's `req=R`, empty for the other records.

    read.py MAIN_FILE
"""
import sys

import pallas_trace as pallas

trace = pallas.open_trace(sys.argv[1])
regions = {r: region.name for r, region in trace.regions.items()}
strings = dict(trace.strings.items())


def what(event):
    record = str(event.record).split(".")[-1]
    data = event.data
    if record in ("ENTER", "LEAVE"):
        return record, regions[data["region_ref"]]
    if record == "GENERIC":
        return record, strings[data["event_name"]]
    if record in ("MPI_SEND", "MPI_RECV", "MPI_ISEND", "MPI_IRECV"):
        text = f"tag={data['msgTag']} len={data['msgLength']}"
        if "requestID" in data:
            text += f" req={data['requestID']}"
        return record, text
    if record == "MPI_COLLECTIVE_END":
        return record, f"op={data['collectiveOp']} sent={data['sizeSent']} recv={data['sizeReceived']}"
    if "numberOfRequestThreads" in data:
        return record, f"nthreads={data['numberOfRequestThreads']}"
    if "lockID" in data:
        return record, f"lock={data['lockID']}"
    if "taskID" in data:
        return record, f"task={data['taskID']}"
    if "requestID" in data:
        return record, f"req={data['requestID']}"
    return record, ""


out = []
for archive in trace.archives:
    for thread in archive.threads:
        name = archive.locations[thread.id].name
        for item, k in thread:
            if isinstance(item, pallas.Event):
                record, text = what(item)
                out.append(f"{name}\t{item.timestamps[k]}\t{record}\t{text}")
print("\n".join(out))
