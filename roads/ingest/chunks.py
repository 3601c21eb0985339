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

import contextlib
import hashlib
import math
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from roads.errors import InputError
from roads.faults import point
from roads.files import sha256
from roads.ingest.fastcsv import Attempt, Body, layout_of, parse_body, why_not
from roads.ingest.readers import ReadOptions, staged_batches
from roads.ingest.validate import Hands, Parsed, parse_staged
from roads.schema import one_run_each
from roads.store import SPILL, TEMPORARY_PREFIX

#: Bytes of input read, parsed and spilled at a time (about 0.45 million coups of a
#: card-level export). Tests lower it to cut small files into many chunks.
CHUNK_BYTES = 32 << 20
#: Bytes of a card-level row, to turn the chunk into rows a batch on the general path.
ROW_BYTES = 70
_SIDES = ("p", "b")
_GENERATIONS = 1 << 20  # keys per day
_UNDATED = 1 << 30  # the day of a shoe whose rows carry no time


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


def remove_spill(root: Path, run_id: str) -> None:
    """Remove a run's spill folder (when the run ends, however it ends)."""
    shutil.rmtree(root / SPILL / run_id, ignore_errors=True)
    with contextlib.suppress(OSError):
        (root / SPILL).rmdir()  # (only if no other run's folder is left)


def to_frame(parsed: Parsed) -> pl.DataFrame:
    """Parsed rows as one frame (without ``_file``, which every row of a spill shares);
    ``~start``: the front end's shoe runs, null where it found a shoe in several runs."""
    starts = pl.Series("~start", parsed.starts, dtype=pl.Boolean) if parsed.starts is not None \
        else pl.repeat(None, parsed.rows.height, dtype=pl.Boolean, eager=True).alias("~start")
    columns = [starts, parsed.coup.alias("~coup"),
               pl.Series("~coup_unreadable", parsed.coup_unreadable),
               parsed.dealt_at.alias("~dealt_at"),
               *(pl.Series(f"~r_{name}", values) for name, values in parsed.recorded.items())]
    for side, hands in zip(_SIDES, (parsed.player, parsed.banker), strict=True):
        columns += [*(pl.Series(f"~{side}c{i}", hands.cards[:, i]) for i in range(3)),
                    *(pl.Series(f"~{side}v{i}", hands.values[:, i]) for i in range(3)),
                    pl.Series(f"~{side}n", hands.count), pl.Series(f"~{side}k", hands.kind)]
    return parsed.rows.drop("_file").with_columns(columns)


def from_frame(frame: pl.DataFrame, path: Path, starts: np.ndarray | None = None) -> Parsed:
    """The inverse of :func:`to_frame` (``starts``: the rows' shoe runs, if known)."""
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
                  array("~coup_unreadable"), frame["~dealt_at"].alias("dealt_at"), starts)


def bucket_starts(frame: pl.DataFrame, pieces: list[int]) -> np.ndarray | None:
    """A bucket's shoe runs, when each of its shoes is one run of rows; else None.

    The bucket is ``pieces`` (row counts) read from its chunks, each in file order, whose
    ``~start`` flags are the front end's runs. Inside a piece they hold (a row that went on
    its shoe in the file still follows that row); a piece's first row starts a run unless
    the piece before ended with the same shoe (a shoe across two chunks). A shoe may still
    come back in a later run, so the runs' shoes must all differ."""
    flags = frame["~start"]
    if not frame.height or flags.null_count():
        return None
    starts = flags.to_numpy().copy()
    ids = frame.select("table_id", "shoe_id")
    firsts = np.cumsum(pieces)[:-1]
    firsts = firsts[firsts > 0]
    if len(firsts):
        shoe = pl.struct("table_id", "shoe_id")
        same = ids[firsts - 1].select(shoe).to_series().eq_missing(
            ids[firsts].select(shoe).to_series())
        starts[firsts] = ~same.to_numpy()
    starts[0] = True
    return one_run_each(frame, starts)


class Spill:
    """One input file's parsed rows on disk, to be read back in buckets of whole shoes.

    Each row goes under its shoe's *key*: the day of the shoe's first rows (as first seen)
    and, for a day too large for one bucket, which part of that day, so that a bucket holds
    whole shoes of neighbouring days and writes few part files (a store files shoes by
    day). Each chunk is one Arrow IPC
    file of record batches, one run of batches per key; a bucket reads its keys' batches
    from every chunk, keys in order and each key's chunks in file order, so each shoe's rows
    keep their order (and a file listed shoe by shoe stays shoe by shoe). The shoes seen
    and their keys are the one state kept across chunks (a row per shoe)."""

    def __init__(self, root: Path, run_id: str, number: int, path: Path) -> None:
        self.path = path
        self.folder = root / SPILL / run_id / str(number)
        self.buckets = max(2, math.ceil(path.stat().st_size / CHUNK_BYTES))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.clear()

    def clear(self) -> None:
        """Drop every spilled row (to spill the file again)."""
        for old in self.folder.iterdir():
            old.unlink()
        self.chunks = 0
        self.shoes = pl.DataFrame(schema={"~shoe": pl.UInt64, "~key": pl.Int64})
        self.batches: dict[int, list[tuple[int, int, int]]] = {}  # key -> chunk, first, n
        self.sizes: dict[int, int] = {}  # key -> bytes spilled
        self.written: dict[int, int] = {}  # chunk -> bytes of its file, as written
        self.generation: dict[int, int] = {}  # day -> the key its new shoes take

    def _file(self, chunk: int) -> Path:
        return self.folder / f"{TEMPORARY_PREFIX}{chunk:05d}.arrow"

    def _keys(self, frame: pl.DataFrame, starts: np.ndarray | None = None) -> pl.Series:
        """Each row's key (see the class doc); a shoe keeps the key it was first given.
        Shoes are told apart by a 64-bit hash of their ids: two that share one share a
        key, which only puts them in one bucket. ``starts``: the rows' shoe runs, when the
        front end found each shoe to be one run; the key is then found once per run, not
        once per row (a fifth of the time)."""
        shoe = pl.struct("table_id", "shoe_id").hash().alias("~shoe")
        runs = None
        if starts is None or not frame.height:  # looked up: every row
            asked = frame.select(shoe, pl.col("~dealt_at").dt.epoch("d").alias("~day"))
            seen = asked.group_by("~shoe").agg(pl.col("~day").min().fill_null(_UNDATED))
        else:  # looked up: each run's first row, with the run's earliest day
            heads = np.flatnonzero(starts)
            runs = np.diff(np.r_[heads, frame.height])
            days = frame["~dealt_at"].dt.epoch("d").fill_null(_UNDATED).to_numpy()
            asked = seen = frame[heads].select(shoe).with_columns(
                pl.Series("~day", np.minimum.reduceat(days, heads)))
        new = seen.join(self.shoes, on="~shoe", how="anti")
        if new.height:
            now = {day: day * _GENERATIONS + self.generation.get(day, 0)
                   for day in new["~day"].unique().to_list()}
            self.shoes = pl.concat([self.shoes, new.select("~shoe", pl.col("~day").replace_strict(
                now, return_dtype=pl.Int64).alias("~key"))])
        keys = asked["~shoe"].replace_strict(self.shoes["~shoe"], self.shoes["~key"],
                                            return_dtype=pl.Int64).alias("~key")
        return keys if runs is None else pl.Series("~key", np.repeat(keys.to_numpy(), runs))

    def _grown(self) -> None:
        """A day whose current key holds half a chunk's worth takes its new shoes to a new
        key (so no key outgrows a bucket, however many coups one day holds)."""
        for key, size in self.sizes.items():
            day, generation = divmod(key, _GENERATIONS)
            if size >= CHUNK_BYTES // 2 and self.generation.get(day, 0) == generation:
                self.generation[day] = generation + 1

    def add(self, parsed: Parsed) -> None:
        """Spill one chunk's rows, grouped by key."""
        frame = to_frame(parsed)
        frame = frame.with_columns(self._keys(frame, parsed.starts))
        if not frame["~key"].is_sorted():  # (a file in time order is in key order)
            frame = frame.sort("~key", maintain_order=True)
        runs = frame["~key"].rle()
        table = frame.drop("~key").to_arrow()
        del frame
        chunk, at, batch = self.chunks, 0, 0
        with pa.OSFile(str(self._file(chunk)), "wb") as sink, \
                pa.ipc.new_file(sink, table.schema) as writer:
            for key, length in zip(runs.struct.field("value").to_list(),
                                   runs.struct.field("len").to_list(), strict=True):
                piece = table.slice(at, length).to_batches()
                for b in piece:
                    writer.write_batch(b)
                self.batches.setdefault(key, []).append((chunk, batch, len(piece)))
                self.sizes[key] = self.sizes.get(key, 0) + sum(b.nbytes for b in piece)
                at += length
                batch += len(piece)
        self.written[chunk] = self._file(chunk).stat().st_size
        self.chunks += 1
        self._grown()
        point("ingest:spilled")

    def _groups(self) -> list[list[int]]:
        """Keys in order, cut into about :attr:`buckets` runs of similar size."""
        target = sum(self.sizes.values()) / self.buckets
        groups: list[list[int]] = [[]]
        size = 0
        for key in sorted(self.sizes):
            if size >= target:
                groups.append([])
                size = 0
            groups[-1].append(key)
            size += self.sizes[key]
        return [g for g in groups if g]

    def __iter__(self) -> Iterator[Parsed]:
        """Each bucket's rows (whole shoes, each in file order)."""
        for group in self._groups():
            # Mapped, not copied (4x faster), and for this bucket only: the pages a mapping
            # has touched count as the process's memory until it goes, so mappings kept
            # for the whole file grew with it (+300 MB at 4 M coups).
            readers = {c: pa.ipc.open_file(self._mapped(c))
                       for c in sorted({c for key in group for c, _, _ in self.batches[key]})}
            pieces = [[readers[chunk].get_batch(i) for i in range(first, first + n)]
                      for key in group for chunk, first, n in self.batches[key]]
            del readers
            frame = pl.from_arrow(pa.Table.from_batches([b for p in pieces for b in p]))
            assert isinstance(frame, pl.DataFrame)
            rows = [sum(b.num_rows for b in p) for p in pieces]
            del pieces
            yield from_frame(frame, self.path, bucket_starts(frame, rows))

    def _mapped(self, chunk: int) -> pa.MemoryMappedFile:
        """A chunk's file, mapped, if it is still the size it was written: a mapped file
        cut short would kill the process with SIGBUS when its missing pages are read (no
        message, nothing to clean up). A change that keeps the size is not noticed here:
        hashing every spilled byte twice would cost a tenth of the run."""
        path = self._file(chunk)
        try:
            mapped = pa.memory_map(str(path))
        except OSError:
            mapped = None
        if mapped is None or mapped.size() != self.written[chunk]:
            found = "is gone" if mapped is None else f"holds {mapped.size():,} bytes"
            raise InputError(
                f"{path}: this run's spill file {found}; the run wrote "
                f"{self.written[chunk]:,} bytes (something else changed it while the run "
                f"ran): nothing of this run was stored; run the ingest again")
        return mapped

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
    for staged in staged_batches(path, options, max(1, CHUNK_BYTES // ROW_BYTES)):
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
    spilled: Future[None] | None = None
    # A chunk is spilled while the next is parsed (the parser's serial steps leave a core
    # idle); one chunk of each in flight, so memory stays at a few chunks.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spill") as spiller:
        for data in _line_chunks(path):
            if hashed is not None:
                hashed.result()
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
                if spilled is not None:
                    spilled.result()
                spilled = spiller.submit(spill.add, body.parsed)
            del body
        if spilled is not None:
            spilled.result()
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
