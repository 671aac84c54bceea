#!/usr/bin/env python3
"""Writes a Kineto-like trace-event file to stdout: about EVENTS events on
the CPU side, and the GPU events they launch (about 1.55 × EVENTS events
in all):
CPU threads of nested operators written at completion (children before
parents, as Kineto writes `X` events), each launch with its `ac2g` flow to
a kernel on one of four GPU streams, kernels written after the CPU events,
counters, and the metadata first.

    gen-chrome.py EVENTS > trace.json
"""
import random
import sys

events = int(sys.argv[1])
rng = random.Random(1)
out = sys.stdout
write = out.write
write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU"}],\n"traceEvents": [\n')
write('{"ph": "M", "pid": 100, "name": "process_name", "args": {"name": "python"}},\n')
write('{"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "GPU 0"}},\n')
for s in range(4):
    write('{"ph": "M", "pid": 0, "tid": %d, "name": "thread_name", "args": {"name": "stream %d"}},\n' % (7 + s, 7 + s))
kernels = []
written = 0
t = 1700000000000000.0
corr = 0
while written < events:
    tid = 100 + rng.randrange(8)
    start = t
    children = []
    c = start + 1.25
    for _ in range(3):
        d = round(rng.uniform(2, 20), 3)
        children.append((c, d))
        c += d + 0.5
    for (cs, d) in children:
        corr += 1
        write('{"ph": "X", "cat": "cpu_op", "name": "aten::op%d", "pid": 100, "tid": %d, "ts": %.3f, "dur": %.3f, '
              '"args": {"External id": %d, "Input Dims": [[64, 128], [128]], "Input type": ["float", "float"]}},\n'
              % (rng.randrange(40), tid, cs, d, corr))
        write('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": %d, "ts": %.3f, "dur": 0.5, '
              '"args": {"correlation": %d}},\n' % (tid, cs + 0.1, corr))
        write('{"ph": "s", "cat": "ac2g", "name": "ac2g", "id": %d, "pid": 100, "tid": %d, "ts": %.3f},\n' % (corr, tid, cs + 0.1))
        kernels.append((corr, cs + 5, d))
        written += 3
    write('{"ph": "X", "cat": "user_annotation", "name": "step", "pid": 100, "tid": %d, "ts": %.3f, "dur": %.3f},\n'
          % (tid, start, c - start))
    write('{"ph": "C", "name": "memory", "pid": 100, "ts": %.3f, "args": {"allocated": %d}},\n' % (start, rng.randrange(1 << 30)))
    written += 2
    t = c + 1
for i, (corr, ks, d) in enumerate(kernels):
    stream = 7 + corr % 4
    write('{"ph": "X", "cat": "kernel", "name": "void gemm_kernel<float, 128>(float const*, float*)", "pid": 0, "tid": %d, '
          '"ts": %.3f, "dur": %.3f, "args": {"correlation": %d, "grid": [128, 1, 1], "block": [256, 1, 1]}},\n'
          % (stream, ks, d, corr))
    write('{"ph": "f", "cat": "ac2g", "name": "ac2g", "id": %d, "pid": 0, "tid": %d, "ts": %.3f, "bp": "e"},\n' % (corr, stream, ks))
write('{"ph": "i", "name": "end", "pid": 100, "tid": 100, "ts": %.3f, "s": "t"}\n' % t)
write('],\n"traceName": "bench"}\n')
