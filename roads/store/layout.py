"""Where stored files live and what they are called.

Part names are injective in what they hold: a readable prefix (ids with unsafe characters
replaced, cut short) beside a digest of the exact ids, so two different tables or shoes can
never be given one name (``T:1`` and ``T_1`` read alike but differ in their digest).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from roads.store.catalog import UNDATED

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
PART_GLOB = "part-*.parquet"
TABLES = ("coups", "shoes")
TEMPORARY_PREFIX = ".tmp-"


def part_name(kind: str, *ids: str) -> str:
    """``part-KIND-READABLE-DIGEST.parquet`` for the exact ids."""
    readable = _SAFE.sub("_", "-".join(ids)).strip("_")[:48] or "x"
    digest = hashlib.sha256("\0".join(ids).encode()).hexdigest()[:24]
    return f"part-{kind}-{readable}-{digest}.parquet"


def partition(table: str, day: str) -> str:
    """The relative directory of a table's day partition (``coups/date=2026-01-01``)."""
    return f"{table}/date={day}"


def relative_path(table: str, day: str | None, name: str) -> str:
    return f"{partition(table, day or UNDATED)}/{name}"


def data_files(root: Path) -> list[str]:
    """Every part file present under ``root`` (relative paths), whether catalogued or not."""
    found = []
    for table in TABLES:
        directory = root / table
        if directory.is_dir():
            found += [p.relative_to(root).as_posix() for p in directory.rglob(PART_GLOB)]
    return sorted(found)


def temporary_files(root: Path) -> list[str]:
    """Hidden temporary files left by an interrupted write (relative paths)."""
    found = []
    for table in (*TABLES, "ingest", "quarantine", "flags", "checkpoints", "spill"):
        directory = root / table
        if directory.is_dir():
            found += [p.relative_to(root).as_posix()
                      for p in directory.rglob(f"{TEMPORARY_PREFIX}*")]
    return sorted(found)
