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
from pathlib import Path
from typing import Any

import polars as pl

from roads import faults
from roads.engine import DealtBatch, deal_batch, shoe_seeds
from roads.ingest.engine_batches import EngineParts
from roads.rules import RuleSet
from roads.store import ArrowPart, Part, Store, StoreError, Written, write_arrow_part
from roads.store.catalog import FileEntry

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
class BatchFile:
    """A worker's file, written unsynced and not journaled: its entry and the shoe rows
    the parent stages for it (see :class:`roads.ingest.engine_batches.EngineParts`)."""

    entry: FileEntry
    shoes: list[tuple[Any, ...]]
    index: list[tuple[Any, ...]]


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
    with store.bulk_lock(), store.staging() as staged:
        store.sweep(("engine",))
        for count, files in _dealt(sim, store.root):
            for f in files:
                staged.add_sorted(f.entry.path, f.shoes, f.index)
                written.append(Written(f.entry, durable=False))
            faults.point("simulate:batch-staged")
            total += files[0].entry.rows
            if progress is not None:
                progress(count, files[0].entry.rows)
        store.commit("files_published", written, {"run": sim.metadata(), "coups": total},
                     actor, staged=staged)
    return [w.entry.path for w in written], total


def _dealt(sim: Simulation, root: Path) -> Iterator[tuple[int, list[BatchFile]]]:
    """Each batch's shoes and files, in order; by worker processes when there is more
    than one batch (a single one is not worth a fork)."""
    ranges = list(sim.ranges())
    if len(ranges) <= 1:
        yield from ((count, deal_files(sim, root, first, count)) for first, count in ranges)
        return
    workers = min(WORKERS, os.cpu_count() or 1, len(ranges))
    with _workers(workers) as pool:
        pending: list[tuple[tuple[int, int], Future[list[BatchFile]]]] = []
        for first, count in ranges:
            pending.append(((first, count), pool.submit(deal_files, sim, root, first, count)))
            while len(pending) > 2 * workers:  # (bounded memory: two batches a worker)
                yield _result(*pending.pop(0))
        while pending:
            yield _result(*pending.pop(0))


def _result(shoes: tuple[int, int], job: Future[list[BatchFile]]
            ) -> tuple[int, list[BatchFile]]:
    try:
        return shoes[1], job.result()
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
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)


def deal_files(sim: Simulation, root: Path, first: int, count: int) -> list[BatchFile]:
    """One batch dealt and written as its two part files under ``root``, unsynced and not
    journaled; without polars or the parallel kernel, so a forked worker can run it."""
    parts = EngineParts(sim, first, deal_batch(sim.rules, shoe_seeds(sim.seed, first, count),
                                               serial=True))
    (coups, shoes), (lines, index) = parts.coups_content(), parts.shoes_content()
    name, meta = sim.part_name(first, count), sim.metadata()
    return [BatchFile(write_arrow_part(root, ArrowPart("coups", "undated", name, parts.coups,
                                                       meta), "engine", coups), shoes, []),
            BatchFile(write_arrow_part(root, ArrowPart("shoes", "undated", name, parts.shoes,
                                                       meta), "engine", lines), [], index)]
