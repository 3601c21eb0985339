"""Simulated tables: engine batches turned into canonical ``coups`` and ``shoes`` tables.

Shoe ``i`` of a run goes to table ``i % tables`` as that table's shoe ``i // tables``; its
clock is fixed by that position (one shoe slot per hour, a coup every 30 seconds), so every
record — timestamps included — depends only on the run seed, the rule set and the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from roads.engine import DealtBatch, deal_batch, shoe_seeds
from roads.errors import InputError
from roads.ingest.bounds import DEALT_AT_YEARS
from roads.ingest.engine_batches import SHOE_SLOT_SECONDS, EngineFiles
from roads.rules import RuleSet
from roads.store import Part, Store, Written

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)
#: The most shoes one run deals (about 800 M coups, some 9 GB of Parquet).
MAX_SHOES = 10_000_000


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

    def __post_init__(self) -> None:
        """Refuse a run that could not be stored whole: more shoes than any store here is
        sized for (a mistyped count would fill the disk for hours), or one whose clock
        would run outside the years an import accepts (:data:`DEALT_AT_YEARS`)."""
        if not 1 <= self.shoes <= MAX_SHOES:
            raise InputError(f"--shoes {self.shoes:,}: deal between 1 and {MAX_SHOES:,} shoes "
                             "in one run (run more runs with other seeds for more)")
        first, final = DEALT_AT_YEARS
        if self.start.year < first:
            raise InputError(f"--start {self.start:%Y-%m-%d}: a simulated clock starts in "
                             f"{first} or later (an import quarantines coups before then)")
        slots = -(-self.shoes // self.tables)  # (a table's shoes, one slot an hour each)
        last = self.start.timestamp() + (slots + 1) * SHOE_SLOT_SECONDS
        if last >= datetime(final + 1, 1, 1, tzinfo=UTC).timestamp():
            raise InputError(f"--start {self.start:%Y-%m-%d}: {self.shoes:,} shoes over "
                             f"{self.tables} table(s) deal one an hour a table, past the "
                             f"end of {final} (an import quarantines coups after it, so "
                             "an export of them could not be read back); start earlier or "
                             "use more tables")

    def table_id(self, table: int) -> str:
        return f"{self.table_prefix}-{table + 1:02d}"

    def shoe_id(self, index: int) -> str:
        return f"sim{self.seed}-{index + 1:07d}"

    def batches(self) -> Iterator[tuple[int, DealtBatch]]:
        """``(first shoe index, batch)`` pairs; memory is bounded by ``batch_shoes``."""
        for first in range(0, self.shoes, self.batch_shoes):
            count = min(self.batch_shoes, self.shoes - first)
            yield first, deal_batch(self.rules, shoe_seeds(self.seed, first, count))

    @property
    def entered_by(self) -> str:
        return f"engine seed {self.seed}"

    def metadata(self) -> dict[str, str]:
        return {"rules": self.rules.name, "decks": str(self.rules.decks),
                "seed": str(self.seed), "shoes": str(self.shoes), "tables": str(self.tables),
                "start": self.start.isoformat()}

    def part(self, table: str, first: int, count: int, data: pl.DataFrame) -> Part:
        """One batch's part file; names derive from the run and shoe range, so repeating a
        run names the same files."""
        name = (f"part-engine-{self.rules.name}-s{self.seed}-t{self.tables}-"
                f"{first:09d}-{first + count:09d}.parquet")
        return Part(table, "undated", name, data, self.metadata())


def write_simulation(
    sim: Simulation, store: Store, progress: Callable[[int, int], None] | None = None,
    actor: str = "engine",
) -> tuple[list[str], int]:
    """Deal the run into the store; returns the files written and the coups dealt.

    One part file per table per batch; batches are encoded on writer threads (pyarrow and
    polars release the GIL) while the next batch is dealt, with at most two batches in
    flight, so memory stays bounded whatever the number of shoes. The files become visible
    together, when one ``files_published`` event journals them; a run killed before that
    leaves files no reader sees, which the next engine run into the store removes. The files
    are fsynced side by side by that commit, not one by one on the writer threads."""
    written: list[Written] = []
    total = 0
    pending: list[Future[list[Written]]] = []
    with store.bulk_lock(), store.staging() as staged:
        store.sweep(("engine",))
        with ThreadPoolExecutor(max_workers=2) as pool:
            for first, batch in sim.batches():
                files = EngineFiles(sim, first, batch)
                while len(pending) >= 2:
                    written += store.stage(staged, pending.pop(0).result())
                count = len(batch.seeds)
                pending.append(pool.submit(_write, store, sim, first, count, files))
                total += files.coups.height
                if progress is not None:
                    progress(count, files.coups.height)
            for job in pending:
                written += store.stage(staged, job.result())
        store.commit("files_published", written, {"run": sim.metadata(), "coups": total},
                     actor, staged=staged)
    return [w.entry.path for w in written], total


def _write(store: Store, sim: Simulation, first: int, count: int, files: EngineFiles
           ) -> list[Written]:
    """One batch's two part files, written unsynced; the coups file's content is hashed
    from the batch's buffers here, on the writer thread (the shoes file's, by the store)."""
    parts = [sim.part(t, first, count, data)
             for t, data in (("coups", files.coups), ("shoes", files.shoes))]
    return store.write_parts(parts, "engine", False, [files.coups_content(), None])
