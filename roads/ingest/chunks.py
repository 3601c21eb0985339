"""A large input in bounded memory: read in chunks, regrouped by shoe, checked bucket by bucket.

Every per-shoe rule (numbering, inventory, capacity, duplicates, conflicts with stored coups
and live shoes, the shoe rows) must see each shoe whole, but a shoe can span two chunks and
a casino's export sorted by time interleaves its tables. So each chunk's parsed rows are
*spilled*: split by a hash of (table, shoe) into ``K`` buckets written as Arrow IPC files
under the run's id (``spill/RUN/FILE/``), in file order. Each bucket then holds whole shoes,
about one chunk's worth, and is read back and checked alone. ``K`` grows with the file, so
memory does not. The files are hidden temporaries (``.tmp-``): ``roads store verify`` names
any a killed run left, and the next run removes them (:func:`sweep`).

A file no larger than one chunk is read whole, in one pass, without a spill.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from roads.errors import InputError
from roads.faults import point
from roads.files import sha256
from roads.ingest.fastcsv import Attempt, Body, layout_of, parse_body, why_not
from roads.ingest.readers import ReadOptions, staged_batches
from roads.ingest.validate import Hands, Parsed, parse_staged
from roads.store.layout import TEMPORARY_PREFIX

#: Bytes of input read, parsed and spilled at a time (about 0.9 million coups of a
#: card-level export). Tests lower it to cut small files into many chunks.
CHUNK_BYTES = 64 << 20
#: Rows per batch on the general path (a card-level row is about 70 bytes).
CHUNK_ROWS = CHUNK_BYTES // 70
SPILL = "spill"
_SIDES = ("p", "b")


def chunked(path: Path, fmt: str) -> bool:
    """Whether the file is read in chunks (larger than one chunk, and not Parquet)."""
    return fmt != "parquet" and path.stat().st_size > CHUNK_BYTES


def sweep(root: Path) -> list[str]:
    """Remove every spill folder (call under the store's bulk lock: no run is in flight, and a
    run removes its own spill when it ends, so any left was killed)."""
    folder = root / SPILL
    gone = sorted(p.relative_to(root).as_posix() for p in folder.rglob("*") if p.is_file()) \
        if folder.is_dir() else []
    shutil.rmtree(folder, ignore_errors=True)
    return gone


def to_frame(parsed: Parsed) -> pl.DataFrame:
    """Parsed rows as one frame (without ``_file``, which every row of a spill shares)."""
    columns = [parsed.coup.alias("~coup"),
               pl.Series("~coup_unreadable", parsed.coup_unreadable),
               parsed.dealt_at.alias("~dealt_at"),
               *(pl.Series(f"~r_{name}", values) for name, values in parsed.recorded.items())]
    for side, hands in zip(_SIDES, (parsed.player, parsed.banker), strict=True):
        columns += [*(pl.Series(f"~{side}c{i}", hands.cards[:, i]) for i in range(3)),
                    *(pl.Series(f"~{side}v{i}", hands.values[:, i]) for i in range(3)),
                    pl.Series(f"~{side}n", hands.count), pl.Series(f"~{side}k", hands.kind)]
    return parsed.rows.drop("_file").with_columns(columns)


def from_frame(frame: pl.DataFrame, path: Path) -> Parsed:
    """The inverse of :func:`to_frame`."""
    def array(name: str) -> np.ndarray:
        return frame[name].to_numpy()

    def hands(side: str) -> Hands:
        return Hands(np.column_stack([array(f"~{side}c{i}") for i in range(3)]),
                     np.column_stack([array(f"~{side}v{i}") for i in range(3)]),
                     array(f"~{side}n"), array(f"~{side}k"))

    recorded = {c[3:]: array(c) for c in frame.columns if c.startswith("~r_")}
    rows = frame.select(pl.lit(str(path)).alias("_file"),
                        *(c for c in frame.columns if not c.startswith("~")))
    return Parsed(rows, hands("p"), hands("b"), recorded, frame["~coup"].alias("coup"),
                  array("~coup_unreadable"), frame["~dealt_at"].alias("dealt_at"))


class Spill:
    """One input file's parsed rows in ``buckets`` buckets of whole shoes, on disk."""

    def __init__(self, root: Path, run_id: str, number: int, path: Path) -> None:
        self.path = path
        self.folder = root / SPILL / run_id / str(number)
        self.buckets = max(2, math.ceil(path.stat().st_size / CHUNK_BYTES))
        self.chunks = 0
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, bucket: int, chunk: int) -> Path:
        return self.folder / f"{TEMPORARY_PREFIX}{bucket:05d}-{chunk:05d}.arrow"

    def add(self, parsed: Parsed) -> None:
        """Spill one chunk's rows, each to its shoe's bucket."""
        frame = to_frame(parsed).with_columns(
            (pl.struct("table_id", "shoe_id").hash() % self.buckets).alias("~bucket"))
        for (bucket,), rows in frame.partition_by("~bucket", maintain_order=True,
                                                  include_key=False, as_dict=True).items():
            rows.write_ipc(self._path(int(bucket), self.chunks))
        self.chunks += 1
        point("ingest:spilled")

    def __iter__(self) -> Iterator[Parsed]:
        """Each bucket's rows in file order (buckets without rows are left out)."""
        for bucket in range(self.buckets):
            files = [p for c in range(self.chunks) if (p := self._path(bucket, c)).is_file()]
            if not files:
                continue
            frame = pl.concat([pl.read_ipc(f) for f in files])
            for f in files:
                f.unlink()
            if not frame["_row"].is_sorted():  # (a general-path batch out of order)
                frame = frame.sort("_row", maintain_order=True)
            yield from_frame(frame, self.path)

    def clear(self) -> None:
        """Drop every spilled row (to spill the file again)."""
        self.remove()
        self.folder.mkdir(parents=True)
        self.chunks = 0

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def spill_file(fmt: str, options: ReadOptions, spill: Spill,
               hasher: ThreadPoolExecutor) -> tuple[str, str]:
    """Read, parse and spill a large file chunk by chunk: which front end read it and its
    SHA-256 digest. A plain CSV goes through the compiled front end; if a chunk breaks
    its subset, the spill is started again on the general path (as a whole file would be)."""
    path = spill.path
    if fmt == "csv":
        why, digest = _spill_plain(path, options, spill, hasher)
        if why is None:
            return "plain CSV", digest
        spill.clear()
        how = f"general ({why})"
    else:
        how = "general"
    pending = hasher.submit(sha256, path)
    for staged in staged_batches(path, options, CHUNK_ROWS):
        spill.add(parse_staged(staged))
    return how, pending.result()


def _spill_plain(path: Path, options: ReadOptions, spill: Spill,
                 hasher: ThreadPoolExecutor) -> tuple[str | None, str]:
    """Parse and spill a CSV's chunks on the compiled front end: why the file needs the
    general path instead (None: it does not), and the file's digest. Once a chunk breaks
    the subset, the rest is still parsed (nothing spilled) so that the reason is the one
    the whole file would give."""
    h = hashlib.sha256()
    bodies: list[Body] = []
    layout = None
    row = 0
    hashed: Future[None] | None = None
    for data in _line_chunks(path):
        if hashed is not None:
            hashed.result()  # one chunk in flight: memory stays at two chunks
        hashed = hasher.submit(h.update, data.data)
        if layout is None:
            found = layout_of(path, options, data)
            if isinstance(found, Attempt):
                return found.why, ""
            layout = found
            body = parse_body(path, options, layout, data, layout.body, row)
        else:
            body = parse_body(path, options, layout, data, 0, row)
        row += body.lines
        bodies.append(Body(None, body.lines, body.scan, body.status, body.shapes))
        if body.parsed is not None and why_not(bodies) is None:
            spill.add(body.parsed)
    if hashed is not None:
        hashed.result()
    return why_not(bodies), h.hexdigest()


def _last_line_end(data: np.ndarray) -> int:
    """Where the bytes after the last line end begin (0: no line end)."""
    for tail in (1 << 16, len(data)):  # lines are short: the last end is near the end
        ends = np.flatnonzero(data[-tail:] == 10)
        if len(ends):
            return len(data) - min(tail, len(data)) + int(ends[-1]) + 1
    return 0


def _line_chunks(path: Path) -> Iterator[np.ndarray]:
    """The file's bytes in chunks of about :data:`CHUNK_BYTES`, each ending at a line end
    (a line longer than a chunk makes its chunk longer)."""
    size = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        at = 0
        while at < size:
            want = CHUNK_BYTES
            while True:
                data = np.empty(min(want, size - at), dtype=np.uint8)
                got = os.preadv(fd, [data.data], at)
                if got == 0:
                    raise InputError(f"{path}: the file shrank while it was read")
                data = data[:got]
                if at + got >= size:
                    break
                end = _last_line_end(data)
                if end:
                    data = data[:end]
                    break
                want *= 2
            yield data
            at += len(data)
    finally:
        os.close(fd)
