"""Parquet files that are either complete or absent, and canonical reads.

A reader must never see a half-written file: every file is written under a hidden temporary
name in its final directory, fsynced, renamed into place, and the directory fsynced.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import TracebackType
from typing import Final

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from roads.files import commit, temporary_name
from roads.schema import schema

PART_GLOB = "part-*.parquet"
#: Min/max statistics only where queries filter (pruning); computing them on card lists
#: costs a third of the write time and prunes nothing.
STATISTICS_COLUMNS = {
    "coups": ["table_id", "shoe_id", "coup", "dealt_at"],
    "shoes": ["table_id", "shoe_id", "started_at", "ended_at"],
}
COMPRESSION: Final = "zstd"
COMPRESSION_LEVEL = 1


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The canonical Arrow schema, carrying polars' Enum metadata so Enums round-trip."""
    return pl.DataFrame(schema=schema(table)).to_arrow().schema


class AtomicParquetWriter:
    """Stream row groups into one Parquet file that appears only when complete.

    Used as a context manager; an exception inside the block removes the temporary file,
    so a crash mid-write leaves nothing behind but (at worst) a hidden ``.tmp-`` file.
    """

    def __init__(self, path: Path, table: str, metadata: dict[str, str]) -> None:
        self.path = path
        self.table = table
        path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = temporary_name(path)
        base = arrow_schema(table)
        self.schema = base.with_metadata({**(base.metadata or {}), **metadata})
        self._writer = pq.ParquetWriter(
            self._tmp,
            self.schema,
            compression=COMPRESSION,
            compression_level=COMPRESSION_LEVEL,
            write_statistics=STATISTICS_COLUMNS[table],
        )
        self.rows = 0

    def write(self, batch: pa.Table) -> None:
        self._writer.write_table(batch.replace_schema_metadata(self.schema.metadata))
        self.rows += batch.num_rows

    def __enter__(self) -> AtomicParquetWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._writer.close()
        if exc_type is not None:
            self._tmp.unlink(missing_ok=True)
            return
        commit(self._tmp, self.path)


def live_parts(directory: Path) -> list[Path]:
    """Published part files directly in ``directory``, minus parts an interrupted
    compaction has already replaced (see ``Store.compact``)."""
    files = sorted(directory.glob(PART_GLOB))
    note = directory / "_compaction.json"
    if note.exists():
        plan = json.loads(note.read_text())
        replaced = set(plan["old"]) if (directory / plan["new"]).exists() else set()
        files = [f for f in files if f.name not in replaced]
    return files


def parts(root: Path, table: str) -> list[Path]:
    """Every live part file of a canonical table under ``root`` (any partitioning)."""
    directory = root / table
    folders = sorted({f.parent for f in directory.rglob(PART_GLOB)})
    return [f for folder in folders for f in live_parts(folder)]


def scan(root: Path, table: str) -> pl.LazyFrame:
    """Lazily read every published part file of a canonical table under ``root``."""
    files = parts(root, table)
    if not files:
        return pl.LazyFrame(schema=schema(table))
    return pl.scan_parquet(files, schema=schema(table))


def file_metadata(path: Path) -> dict[str, str]:
    """A Parquet file's key/value metadata (provenance), decoded."""
    meta = pq.read_metadata(path).metadata or {}
    return {k.decode(): v.decode() for k, v in meta.items() if not k.startswith(b"ARROW")}
