#!/usr/bin/env python3
"""Writes OTF2 test archives with the reference library's Python writer
(Debian's python3-otf2), covering the records tracepipe maps.

    gen.py OUT_DIR VARIANT

VARIANT is `mpi` (ranks, threads, point-to-point and collectives on the
world and a sub-communicator, metrics, attributes of every type, OpenMP and
thread records, RMA, I/O, parameters, program begin/end, clock offsets and
a mapping table on some locations, small event chunks), `ghz` (a 2.4 GHz
clock, ticks beyond 2^62 and a large global offset) or `ps` (a picosecond
clock). The archive is OUT_DIR/traces.otf2.
"""
import sys

import _otf2
import otf2
from otf2.enums import (CollectiveOp, GroupType, LocationGroupType,
                        LocationType, MetricMode, Paradigm, RegionRole, Type)

VARIANTS = {
    # name: (timer resolution, first tick, tick step)
    "mpi": (1_000_000_000, 1_000_000, 1000),
    "ghz": (2_400_000_000, (1 << 62) + 12_345, 2_401),
    "ps": (1_000_000_000_000, 5_000_000_000_000, 1_000_003),
}
RANKS = 4
THREADS = {0: 2, 1: 2}  # rank: threads (default 1)


class Clock:
    """Hands out increasing tick values."""

    def __init__(self, first, step):
        self.now = first
        self.step = step

    def tick(self, n=1):
        self.now += self.step * n
        return self.now


def define(trace):
    d = trace.definitions
    root = d.system_tree_node("machine")
    nodes = [d.system_tree_node(f"node{i}", parent=root) for i in range(2)]
    groups, locs = [], {}
    for r in range(RANKS):
        g = d.location_group(f"MPI Rank {r}", system_tree_parent=nodes[r % 2],
                             location_group_type=LocationGroupType.PROCESS)
        groups.append(g)
        for t in range(THREADS.get(r, 1)):
            # Score-P numbers locations rank << 32 | thread.
            d.locations._ref = (r << 32) + t - 1
            name = "Master thread" if t == 0 else f"OpenMP thread {t}"
            locs[(r, t)] = d.location(name, group=g, type=LocationType.CPU_THREAD)
    masters = [locs[(r, 0)] for r in range(RANKS)]
    world_locs = d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS,
                         paradigm=Paradigm.MPI, members=masters)
    world_group = d.group("world ranks", group_type=GroupType.COMM_GROUP,
                          paradigm=Paradigm.MPI, members=list(range(RANKS)))
    world = d.comm("MPI_COMM_WORLD", group=world_group)
    evens = d.group("even ranks", group_type=GroupType.COMM_GROUP,
                    paradigm=Paradigm.MPI, members=[0, 2])
    sub = d.comm("EVEN_COMM", group=evens, parent=world)
    regions = {
        "main": d.region("main", region_role=RegionRole.FUNCTION, paradigm=Paradigm.USER),
        "compute": d.region("compute", paradigm=Paradigm.COMPILER),
        "MPI_Send": d.region("MPI_Send", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI),
        "MPI_Recv": d.region("MPI_Recv", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI),
        "MPI_Isend": d.region("MPI_Isend", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI),
        "MPI_Irecv": d.region("MPI_Irecv", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI),
        "MPI_Wait": d.region("MPI_Wait", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI),
        "MPI_Allreduce": d.region("MPI_Allreduce", region_role=RegionRole.COLL_ALL2ALL, paradigm=Paradigm.MPI),
        "MPI_Bcast": d.region("MPI_Bcast", region_role=RegionRole.COLL_ONE2ALL, paradigm=Paradigm.MPI),
        "MPI_Barrier": d.region("MPI_Barrier", region_role=RegionRole.BARRIER, paradigm=Paradigm.MPI),
        "!$omp parallel": d.region("!$omp parallel", region_role=RegionRole.PARALLEL, paradigm=Paradigm.OPENMP),
    }
    return d, locs, world, sub, world_locs, regions


def attributes(d):
    kinds = [
        ("a_u8", Type.UINT8, 200), ("a_u16", Type.UINT16, 60000),
        ("a_u32", Type.UINT32, 4_000_000_000), ("a_u64", Type.UINT64, (1 << 64) - 2),
        ("a_i8", Type.INT8, -100), ("a_i16", Type.INT16, -30000),
        ("a_i32", Type.INT32, -2_000_000_000), ("a_i64", Type.INT64, -(1 << 62)),
        ("a_f32", Type.FLOAT, 1.5), ("a_f64", Type.DOUBLE, 0.1),
        ("a_str", Type.STRING, "hello world"),
    ]
    return {d.attribute(n, n, t): v for n, t, v in kinds}


def metrics(d, locs):
    cycles = d.metric_member("PAPI_TOT_CYC", "cycles", value_type=Type.UINT64,
                             metric_mode=MetricMode.ACCUMULATED_START, unit="#")
    temp = d.metric_member("temperature", "die", value_type=Type.DOUBLE,
                           metric_mode=MetricMode.ABSOLUTE_POINT, unit="C")
    delta = d.metric_member("delta", "signed", value_type=Type.INT64,
                            metric_mode=MetricMode.RELATIVE_LAST, unit="B")
    two = d.metric_class([cycles, temp])
    one = d.metric_class([delta])
    return two, one


def rank_body(w, r, c, regs, world, sub, attrs, mclasses, extra):
    """One rank's master thread: point-to-point, collectives, metrics."""
    two, one = mclasses
    w.enter(c.tick(), regs["main"], attributes=attrs if r == 0 else None)
    w.metric(c.tick(), two, [1000 * (r + 1), 36.5 + r])
    w.metric(c.tick(), one, [-r - 1])
    peer = (r + 1) % RANKS
    src = (r - 1) % RANKS
    for it in range(3):
        w.enter(c.tick(), regs["compute"])
        w.leave(c.tick(2 + r), regs["compute"])
        # Blocking ring: even ranks send first.
        order = ("send", "recv") if r % 2 == 0 else ("recv", "send")
        for op in order:
            if op == "send":
                w.enter(c.tick(), regs["MPI_Send"])
                w.mpi_send(c.tick(), peer, world, 10 + it, 64 * (it + 1))
                w.leave(c.tick(), regs["MPI_Send"])
            else:
                w.enter(c.tick(), regs["MPI_Recv"])
                w.mpi_recv(c.tick(3), src, world, 10 + it, 64 * (it + 1))
                w.leave(c.tick(), regs["MPI_Recv"])
        # Nonblocking exchange with both neighbours.
        w.enter(c.tick(), regs["MPI_Irecv"])
        w.mpi_irecv_request(c.tick(), 100 + it)
        w.leave(c.tick(), regs["MPI_Irecv"])
        w.enter(c.tick(), regs["MPI_Isend"])
        w.mpi_isend(c.tick(), peer, world, 20, 8, 200 + it)
        w.leave(c.tick(), regs["MPI_Isend"])
        w.enter(c.tick(), regs["MPI_Wait"])
        w.mpi_request_test(c.tick(), 100 + it)
        w.mpi_irecv(c.tick(), src, world, 20, 8, 100 + it)
        w.mpi_isend_complete(c.tick(), 200 + it)
        w.leave(c.tick(), regs["MPI_Wait"])
        # Collectives: world allreduce; bcast from 2 on the even ranks.
        w.enter(c.tick(), regs["MPI_Allreduce"])
        w.mpi_collective_begin(c.tick())
        w.mpi_collective_end(c.tick(1 + r), CollectiveOp.ALLREDUCE, world,
                             otf2.UNDEFINED if hasattr(otf2, "UNDEFINED") else 0xFFFFFFFF, 8, 8)
        w.leave(c.tick(), regs["MPI_Allreduce"])
        if r % 2 == 0:
            w.enter(c.tick(), regs["MPI_Bcast"])
            w.mpi_collective_begin(c.tick())
            w.mpi_collective_end(c.tick(), CollectiveOp.BCAST, sub, 1, 16 if r == 2 else 0, 16)
            w.leave(c.tick(), regs["MPI_Bcast"])
    w.enter(c.tick(), regs["MPI_Irecv"])
    w.mpi_irecv_request(c.tick(), 999)
    w.mpi_request_cancelled(c.tick(), 999)
    w.leave(c.tick(), regs["MPI_Irecv"])
    extra(w, c)
    w.enter(c.tick(), regs["MPI_Barrier"])
    w.mpi_collective_begin(c.tick())
    w.mpi_collective_end(c.tick(), CollectiveOp.BARRIER, world, 0xFFFFFFFF, 0, 0)
    w.leave(c.tick(), regs["MPI_Barrier"])
    w.leave(c.tick(), regs["main"])


def main():
    out, variant = sys.argv[1], sys.argv[2]
    resolution, first, step = VARIANTS[variant]
    with otf2.writer.open(out, timer_resolution=resolution,
                          chunk_size_events=256 * 1024) as trace:
        d, locs, world, sub, world_locs, regs = define(trace)
        attrs = attributes(d)
        mclasses = metrics(d, locs)
        par = d.parameter("iterations", parameter_type=otf2.ParameterType.INT64)
        spar = d.parameter("mode", parameter_type=otf2.ParameterType.STRING)
        upar = d.parameter("bytes", parameter_type=otf2.ParameterType.UINT64)
        win = d.rma_win("window", comm=world)
        for r in range(RANKS):
            c = Clock(first + 7 * r * step, step)
            w = trace.event_writer_from_location(locs[(r, 0)])
            if r == 2:
                w = MappedWriter(w, regs, c)
            if r == 3:
                # Enough events for several chunks of 256 KiB.
                for _ in range(12000):
                    w.enter(c.tick(), regs["compute"])
                    w.leave(c.tick(), regs["compute"])

            def extra(w, c, r=r):
                w.parameter_int(c.tick(), par, 3 - r)
                w.parameter_string(c.tick(), spar, "fast")
                w.parameter_unsigned_int(c.tick(), upar, 1 << 40)
                w.rma_win_create(c.tick(), win)
                w.rma_put(c.tick(), win, (r + 1) % RANKS, 128, 7)
                w.rma_op_complete_blocking(c.tick(), win, 7)
                w.rma_win_destroy(c.tick(), win)
                w.measurement_on_off(c.tick(), otf2.MeasurementMode.OFF)
                w.measurement_on_off(c.tick(), otf2.MeasurementMode.ON)
                if r == 0:
                    fork_join(trace, locs, regs, c)
                if r == 1:
                    threads_and_io(trace, d, locs, regs, world, win, c)

            rank_body(w, r, c, regs, world, sub, attrs, mclasses, extra)


class MappedWriter:
    """Writes a location's regions by local ids, with the mapping table
    that turns them into global ones, and clock offsets that shift its
    times (interpolated between them)."""

    def __init__(self, w, regs, c):
        self.w = w
        ids = sorted(r._ref for r in regs.values())
        # Local id i is global id ids[-1 - i]: every reference changes.
        self.local = {g: i for i, g in enumerate(reversed(ids))}
        m = _otf2.IdMap_Create(_otf2.ID_MAP_DENSE, len(ids))
        for g in reversed(ids):
            _otf2.IdMap_AddIdPair(m, self.local[g], g)
        _otf2.DefWriter_WriteMappingTable(w._def_handle, _otf2.MAPPING_REGION, m)
        _otf2.DefWriter_WriteClockOffset(w._def_handle, c.now, 50, 0.0)
        _otf2.DefWriter_WriteClockOffset(w._def_handle, c.now + 300 * c.step, -30, 0.0)

    def enter(self, t, region, attributes=None):
        _otf2.EvtWriter_Enter(self.w.handle, None, t, self.local[region._ref])

    def leave(self, t, region, attributes=None):
        _otf2.EvtWriter_Leave(self.w.handle, None, t, self.local[region._ref])

    def __getattr__(self, name):
        return getattr(self.w, name)


def threads_and_io(trace, d, locs, regs, world, win, c):
    """Rank 1: OpenMP (the deprecated records), thread teams, tasks and
    threads created and waited for, on its two threads; RMA, I/O, calling
    contexts, nonblocking collectives, communicators made and freed,
    program begin and end, a buffer flush."""
    w0 = trace.event_writer_from_location(locs[(1, 0)])
    w1 = trace.event_writer_from_location(locs[(1, 1)])
    team_group = d.group("team 1", group_type=GroupType.COMM_LOCATIONS,
                         paradigm=Paradigm.OPENMP, members=[locs[(1, 0)], locs[(1, 1)]])
    team = d.comm("team of rank 1", group=team_group)
    t = c.tick()
    w0.omp_fork(t, 2)
    w0.omp_acquire_lock(t + 1, 3, 1)
    w0.omp_release_lock(t + 2, 3, 1)
    w0.omp_task_create(t + 3, 42)
    w0.omp_task_switch(t + 4, 42)
    w0.omp_task_complete(t + 5, 42)
    w0.omp_join(t + 6)
    w0.thread_team_begin(t + 7, team)
    w0.thread_task_create(t + 8, team, 0, 1)
    w0.thread_task_switch(t + 9, team, 0, 1)
    w0.thread_task_complete(t + 10, team, 0, 1)
    w0.thread_team_end(t + 11, team)
    w0.thread_create(t + 12, team, 7)
    w1.thread_begin(t + 13, team, 7)
    w1.thread_end(t + 14, team, 7)
    w0.thread_wait(t + 15, team, 7)
    c.tick(20)
    w0.rma_collective_begin(c.tick())
    w0.rma_collective_end(c.tick(), CollectiveOp.BARRIER, 1, win, 0xFFFFFFFF, 0, 0)
    w0.rma_group_sync(c.tick(), 1, win, world.group)
    w0.rma_request_lock(c.tick(), win, 0, 9, otf2.LockType.EXCLUSIVE)
    w0.rma_acquire_lock(c.tick(), win, 0, 9, otf2.LockType.EXCLUSIVE)
    w0.rma_try_lock(c.tick(), win, 0, 9, otf2.LockType.SHARED)
    w0.rma_release_lock(c.tick(), win, 0, 9)
    w0.rma_sync(c.tick(), win, 0, otf2.RmaSyncType.MEMORY)
    w0.rma_wait_change(c.tick(), win)
    w0.rma_get(c.tick(), win, 2, 64, 11)
    w0.rma_atomic(c.tick(), win, 2, otf2.RmaAtomicType.ACCUMULATE, 8, 8, 12)
    w0.rma_op_complete_non_blocking(c.tick(), win, 11)
    w0.rma_op_test(c.tick(), win, 12)
    w0.rma_op_complete_remote(c.tick(), win, 12)
    scl = d.source_code_location("solver.c", 120)
    cc = d.calling_context(regs["compute"], scl, None)
    gen = d.interrupt_generator("cycles", period=1000)
    w0.calling_context_enter(c.tick(), cc, 1)
    w0.calling_context_sample(c.tick(), cc, 0, gen)
    w0.calling_context_leave(c.tick(), cc)
    posix = d.io_paradigm("POSIX", "POSIX I/O", otf2.IoParadigmClass.SERIAL,
                          otf2.IoParadigmFlag.OS)
    node = next(iter(d.system_tree_nodes))
    f = d.io_regular_file("/tmp/out.dat", node)
    h = d.io_handle("fd 3", f, posix, otf2.IoHandleFlag.NONE, None, None)
    w0.io_create_handle(c.tick(), h, otf2.IoAccessMode.WRITE_ONLY,
                        otf2.IoCreationFlag.CREATE, otf2.IoStatusFlag.NONE)
    w0.io_operation_begin(c.tick(), h, otf2.IoOperationMode.WRITE,
                          otf2.IoOperationFlag.NONE, 4096, 1)
    w0.io_operation_complete(c.tick(), h, 4096, 1)
    w0.io_seek(c.tick(), h, -16, otf2.IoSeekOption.FROM_END, 100)
    w0.io_acquire_lock(c.tick(), h, otf2.LockType.EXCLUSIVE)
    w0.io_release_lock(c.tick(), h, otf2.LockType.EXCLUSIVE)
    w0.io_destroy_handle(c.tick(), h)
    w0.io_delete_file(c.tick(), posix, f)
    w0.non_blocking_collective_request(c.tick(), 77)
    w0.non_blocking_collective_complete(c.tick(), CollectiveOp.ALLTOALL, world, 0xFFFFFFFF, 32, 32, 77)
    w0.comm_create(c.tick(), world)
    w0.comm_destroy(c.tick(), world)
    w0.buffer_flush(c.tick(), c.now + 5)
    w0.program_begin(c.tick(), "solver", ["-n", "4"])
    w0.program_end(c.tick(), -3)


def fork_join(trace, locs, regs, c):
    """An OpenMP parallel region on rank 0's two threads."""
    w0 = trace.event_writer_from_location(locs[(0, 0)])
    w1 = trace.event_writer_from_location(locs[(0, 1)])
    t = c.tick()
    w0.thread_fork(t, Paradigm.OPENMP, 2)
    for k, w in enumerate((w0, w1)):
        w.enter(t + 1 + k, regs["!$omp parallel"])
        w.thread_acquire_lock(t + 3 + k, Paradigm.OPENMP, 5, k)
        w.thread_release_lock(t + 5 + k, Paradigm.OPENMP, 5, k)
        w.leave(t + 9 + k, regs["!$omp parallel"])
    w0.thread_join(c.tick(20), Paradigm.OPENMP)


if __name__ == "__main__":
    main()
