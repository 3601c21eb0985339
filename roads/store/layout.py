"""Where stored files live and what they are called.

Part names are injective in what they hold: a readable prefix (ids with unsafe characters
replaced, cut short) beside a digest of the exact ids, so two different tables or shoes can
never be given one name (``T:1`` and ``T_1`` read alike but differ in their digest).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from roads.store.catalog import UNDATED

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
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


#: The store's own files, which no journal event names: the databases (with SQLite's
#: write-ahead log, shared memory and rollback journal), what the directory is, the bulk
#: writers' lock, the journal writers' queue file, the signed checkpoints and the
#: checkpoint key.
DATABASES = ("journal.sqlite", "auth.sqlite", "logins.sqlite")
#: Held by the one bulk writer (exclusive), and by every writer while its files are in
#: flight (shared): :meth:`roads.store.store.Store.writing`.
BULK_LOCK, WRITERS_LOCK = ".bulk.lock", ".writers.lock"
FIXED = frozenset({*(db + suffix for db in DATABASES for suffix in ("", "-wal", "-shm",
                                                                    "-journal")),
                   "store.json", BULK_LOCK, WRITERS_LOCK, "journal.sqlite.lock",
                   "checkpoints/checkpoints.jsonl",
                   "keys/store-ed25519.pem", "keys/store-ed25519.pub"})
#: An ingest run's own files, by folder: its report, quarantined rows and flags (each
#: accounted for when a committed ``import_committed`` event names it).
ATTACHMENTS = {"ingest": ".json", "quarantine": ".jsonl", "flags": ".parquet"}
SPILL = "spill"


@dataclass
class Listing:
    """Every file under a store, by what it is (relative paths, sorted), from one walk.

    ``parts``: part files under a table's day partitions; ``temporaries``: hidden files of a
    write in flight or killed (and a run's spill); ``attachments``: files in an ingest
    run's folders; ``fixed``: the store's own files (:data:`FIXED`); ``other``: anything
    else, and anything that is not a regular file."""

    parts: list[str] = field(default_factory=list)
    temporaries: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


def walk(root: Path) -> Listing:
    """Every file under ``root``, classified, in one ``os.scandir`` pass (a symbolic link is
    listed, never followed)."""
    listing = Listing()
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(root / folder if folder else root))
        except FileNotFoundError:  # (removed meanwhile)
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append(rel)
            elif not entry.is_file(follow_symlinks=False):
                listing.other.append(rel)
            else:
                _kind(listing, rel, entry.name).append(rel)
    for kind in dataclasses.fields(listing):
        getattr(listing, kind.name).sort()
    return listing


def _kind(listing: Listing, rel: str, name: str) -> list[str]:
    """The list of ``listing`` a regular file belongs in."""
    if name.startswith(TEMPORARY_PREFIX):
        return listing.temporaries
    if rel in FIXED:
        return listing.fixed
    parts = rel.split("/")
    if parts[0] == SPILL:
        return listing.temporaries
    if (len(parts) == 3 and parts[0] in TABLES and parts[1].startswith("date=")
            and name.startswith("part-") and name.endswith(".parquet")):
        return listing.parts
    if len(parts) == 2 and name.endswith(ATTACHMENTS.get(parts[0], "/")):
        return listing.attachments
    return listing.other


_TEMPORARY = re.compile(r"\.tmp-[0-9a-f]{32}-(.+)")


def temporary_target(rel: str) -> str | None:
    """The path a hidden temporary (``roads.files.temporary_name``) is written for."""
    folder, _, name = rel.rpartition("/")
    match = _TEMPORARY.fullmatch(name)
    if match is None:
        return None
    return f"{folder}/{match[1]}" if folder else match[1]


def data_files(root: Path) -> list[str]:
    """Every part file present under ``root`` (relative paths), whether catalogued or not."""
    return walk(root).parts


def temporary_files(root: Path) -> list[str]:
    """Hidden temporary files left by an interrupted write (relative paths)."""
    return walk(root).temporaries
