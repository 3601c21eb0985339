"""Simulated tables: engine batches turned into canonical ``coups`` and ``shoes`` tables.

Shoe ``i`` of a run goes to table ``i % tables`` as that table's shoe ``i // tables``; its
clock is fixed by that position (one shoe slot per hour, a coup every 30 seconds), so every
record — timestamps included — depends only on the run seed, the rule set and the index.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import polars as pl
import pyarrow as pa

from roads import faults
from roads.engine import DealtBatch, deal_batch, shoe_seeds
from roads.ingest.engine_batches import EngineParts
from roads.rules import RuleSet
from roads.store import Content, Part, StagedRows, Store, StoreError, Written

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)
#: Worker processes of a run (each deals, builds, digests and encodes whole batches); the
#: parent stages their files' shoe rows and commits. Two: this machine's cores.
WORKERS = 2


@dataclass(frozen=True)
class Simulation:
    """What a run deals: ``shoes`` shoes over ``tables`` tables from ``seed``."""

    rules: RuleSet
    shoes: int
    seed: int
    tables: int = 1
    start: datetime = DEFAULT_START
    table_prefix: str = "SIM"
    batch_shoes: int = 8192

    def table_id(self, table: int) -> str:
        return f"{self.table_prefix}-{table + 1:02d}"

    def shoe_id(self, index: int) -> str:
        return f"sim{self.seed}-{index + 1:07d}"

    def batches(self) -> Iterator[tuple[int, DealtBatch]]:
        """``(first shoe index, batch)`` pairs; memory is bounded by ``batch_shoes``."""
        for first, count in self.ranges():
            yield first, deal_batch(self.rules, shoe_seeds(self.seed, first, count))

    def ranges(self) -> Iterator[tuple[int, int]]:
        """``(first shoe index, shoes)`` of each batch."""
        for first in range(0, self.shoes, self.batch_shoes):
            yield first, min(self.batch_shoes, self.shoes - first)

    @property
    def entered_by(self) -> str:
        return f"engine seed {self.seed}"

    def metadata(self) -> dict[str, str]:
        return {"rules": self.rules.name, "decks": str(self.rules.decks),
                "seed": str(self.seed), "shoes": str(self.shoes), "tables": str(self.tables),
                "start": self.start.isoformat()}

    def part_name(self, first: int, count: int) -> str:
        """One batch's part file name; it derives from the run and shoe range, so
        repeating a run names the same files."""
        return (f"part-engine-{self.rules.name}-s{self.seed}-t{self.tables}-"
                f"{first:09d}-{first + count:09d}.parquet")

    def part(self, table: str, first: int, count: int, data: pl.DataFrame) -> Part:
        """One batch's part file (see :meth:`part_name`)."""
        return Part(table, "undated", self.part_name(first, count), data, self.metadata())


@dataclass(frozen=True, slots=True)
class DealtTables:
    """A worker's batch: its two files' canonical Arrow tables, their content digests and
    the shoe rows the parent stages for them (see
    :class:`roads.ingest.engine_batches.EngineParts`)."""

    coups: pa.Table
    shoes: pa.Table
    coups_digest: str
    shoes_digest: str
    coups_rows: list[tuple[Any, ...]]
    index_rows: list[tuple[Any, ...]]


class WorkerFailed(StoreError):
    """A run's worker process died: nothing was published (the next run removes its
    files)."""


def write_simulation(
    sim: Simulation, store: Store, progress: Callable[[int, int], None] | None = None,
    actor: str = "engine",
) -> tuple[list[str], int]:
    """Deal the run into the store; returns the files written and the coups dealt.

    One part file per table per batch. Batches are dealt, built, digested and encoded by
    :data:`WORKERS` forked processes, each a GIL of its own (as threads of one process,
    the run kept one core busy and the other waiting), with at most two batches each in
    flight, so memory stays bounded whatever the number of shoes; this process stages
    their shoe rows and commits. The files become visible together, when one
    ``files_published`` event journals them; a run killed before that (or whose worker
    died) leaves files no reader sees, which the next engine run into the store removes.
    The files are fsynced side by side by that commit, not one by one by the workers."""
    written: list[Written] = []
    total = 0
    writing: list[tuple[DealtTables, list[Future[Written]]]] = []
    with store.bulk_lock(), store.staging() as staged:
        store.sweep(("engine",))
        for (first, count), tables in _dealt(sim):
            while len(writing) >= 2:
                written += _stage(staged, *writing.pop(0))
            parts = [sim.part(t, first, count, _frame(data))
                     for t, data in (("coups", tables.coups), ("shoes", tables.shoes))]
            writing.append((tables, store.start_parts(parts, "engine", False, [
                Content(tables.coups_digest, _NO_KEYS), Content(tables.shoes_digest, _NO_KEYS)])))
            total += tables.coups.num_rows
            if progress is not None:
                progress(count, tables.coups.num_rows)
        for job in writing:
            written += _stage(staged, *job)
        store.commit("files_published", written, {"run": sim.metadata(), "coups": total},
                     actor, staged=staged)
    return [w.entry.path for w in written], total


_NO_KEYS = pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String})


def _frame(data: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(data)
    assert isinstance(frame, pl.DataFrame)
    return frame


def _stage(staged: StagedRows, tables: DealtTables, jobs: list[Future[Written]]
           ) -> list[Written]:
    """A batch's two files once written, their shoe rows staged; what the commit keeps."""
    coups, shoes = (job.result() for job in jobs)
    staged.add_sorted(coups.entry.path, tables.coups_rows, [])
    staged.add_sorted(shoes.entry.path, [], tables.index_rows)
    return [Written(w.entry, durable=False) for w in (coups, shoes)]


def _dealt(sim: Simulation) -> Iterator[tuple[tuple[int, int], DealtTables]]:
    """Each batch's range and tables, in order; by worker processes when there is more
    than one batch (a single one is not worth a fork)."""
    ranges = list(sim.ranges())
    if len(ranges) <= 1:
        yield from ((r, deal_tables(sim, *r)) for r in ranges)
        return
    workers = min(WORKERS, os.cpu_count() or 1, len(ranges))
    with _workers(workers) as pool:
        pending: list[tuple[tuple[int, int], Future[DealtTables]]] = []
        for first, count in ranges:
            pending.append(((first, count), pool.submit(deal_tables, sim, first, count)))
            while len(pending) > 2 * workers:  # (bounded memory: two batches a worker)
                yield _result(*pending.pop(0))
        while pending:
            yield _result(*pending.pop(0))


def _result(shoes: tuple[int, int], job: Future[DealtTables]
            ) -> tuple[tuple[int, int], DealtTables]:
    try:
        return shoes, job.result()
    except BrokenProcessPool:
        raise WorkerFailed(
            "a simulation worker process died before the run's files were written; nothing "
            "was published (the next run into the store removes its files)") from None


@contextmanager
def _workers(count: int) -> Iterator[ProcessPoolExecutor]:
    """``count`` forked worker processes. The parent's objects are frozen out of the
    collector while they fork (a child's collections would otherwise touch, and so copy,
    every page of them); each child dies with this process (no orphan writes on after a
    kill) and leaves Ctrl-C to it."""
    gc.freeze()
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("fork"),
                               initializer=_worker_started, initargs=(os.getpid(),))
    try:
        try:
            pool.submit(int).result()  # (the fork context forks every worker at once)
        finally:
            gc.unfreeze()
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _worker_started(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with suppress(OSError, AttributeError):  # not Linux: the pool's own checks remain
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        # Keep freed batches' memory for the next batch instead of handing it back to the
        # kernel and faulting it in, zeroed, again (two fifths of a worker's CPU).
        libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD, its largest
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    pa.set_memory_pool(pa.system_memory_pool())
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def deal_tables(sim: Simulation, first: int, count: int) -> DealtTables:
    """One batch dealt, built and digested, without polars or the parallel kernel, so a
    forked worker can run it (polars, the faster encoder, writes it in the parent)."""
    parts = EngineParts(sim, first, deal_batch(sim.rules, shoe_seeds(sim.seed, first, count),
                                               serial=True))
    (coups, coups_rows), (shoes, index_rows) = parts.coups_content(), parts.shoes_content()
    faults.point("simulate:batch-dealt")
    return DealtTables(parts.coups, parts.shoes, coups, shoes, coups_rows, index_rows)
