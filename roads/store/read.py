"""The read port: the only way to the coups and shoes of a store.

Every reader (summary, boards, statistics, checks, exports, batch jobs, the dashboard, the
HTTP API) asks here, and gets the same record: sealed, imported and engine files as the
catalogue lists them, plus every journaled shoe not yet sealed (open shoes included, and
marked open in the shoes table), with the journal's corrections applied. The fast paths
(statistics columns read straight from a file, outcome codes for bulk roads, streamed
chunks) live here too, and go the slow way for any file a correction touches, so a fast
answer is the same answer.

Each read takes one snapshot of the catalogue and the journal in a single SQLite read
transaction, so a shoe being sealed at that moment is counted once, from one side or the
other; a file removed by a compaction between the snapshot and the read makes the read start
again from a new snapshot.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from roads.errors import InputError
from roads.schema import COUP_KEY, COUPS, NO_CARD, SHOES, conform, repeats_a_shoe
from roads.store import catalog
from roads.store.catalog import FileEntry
from roads.store.corrections import MARK, apply_corrections, corrections, touched_shoes
from roads.store.journal import _SELECT, FILE_KINDS, Event, _event
from roads.store.journaled import shoe_frames

if TYPE_CHECKING:
    from roads.stats.columns import ShoeColumns
    from roads.store.store import Store

CHUNK_ROWS = 250_000
T = TypeVar("T")


def _batches(file: pq.ParquetFile, rows: int) -> Iterator[pa.RecordBatch]:
    """A file's rows ``rows`` at a time, never across a row group: pyarrow cannot join a list
    of dictionary values (the cards) from two row groups into one batch ("Nested data
    conversions not implemented"), so a batch spanning a boundary failed the whole export."""
    for group in range(file.num_row_groups):
        yield from file.iter_batches(batch_size=rows, row_groups=[group])


class StoreReadError(InputError):
    """A stored file that cannot be read (named), e.g. a corrupt footer."""


_NOTHING = "nothing is exported (`roads store verify` names every problem)"


@lru_cache(maxsize=1)
def _shoe_keys(shoes: frozenset[tuple[str, str]]) -> pl.Series:
    """A selection's shoes as the list :meth:`Selection.keep_shoes` tests rows against,
    built once for the selection a reader is going through (an export of 12,500 shoes
    built it again for every batch it read: two fifths of the export's main thread). Only
    the latest is kept, so no earlier selection stays in memory."""
    ordered = sorted(shoes)
    wanted = pl.DataFrame({"t": [t for t, _ in ordered], "s": [s for _, s in ordered]},
                          schema={"t": pl.String, "s": pl.String})
    return wanted.select(pl.struct("t", "s")).to_series().implode()


@dataclass(frozen=True, slots=True)
class Selection:
    """Which coups: a table, a shoe, days ``start``..``end`` (UTC, inclusive, by when each
    coup was dealt), or any combination; nothing given means the whole store."""

    table_id: str | None = None
    shoe_id: str | None = None
    start: date | None = None
    end: date | None = None
    shoes: frozenset[tuple[str, str]] | None = None  # these shoes (table, shoe) only

    @property
    def everything(self) -> bool:
        return self == Selection()

    @property
    def by_shoe(self) -> bool:
        return self.table_id is not None or self.shoe_id is not None or self.shoes is not None

    def describe(self) -> dict[str, Any]:
        return {k: (getattr(self, k).isoformat() if isinstance(getattr(self, k), date)
                    else getattr(self, k))
                for k in ("table_id", "shoe_id", "start", "end") if getattr(self, k) is not None}

    def keep(self) -> pl.Expr:
        """The rows of canonical coups inside the selection."""
        keep = self.keep_shoes()
        day = pl.col("dealt_at").dt.date()
        if self.start is not None:
            keep &= day >= self.start
        if self.end is not None:
            keep &= day <= self.end
        return keep

    def keep_shoes(self) -> pl.Expr:
        keep = pl.lit(True)
        if self.table_id is not None:
            keep &= pl.col("table_id") == self.table_id
        if self.shoe_id is not None:
            keep &= pl.col("shoe_id") == self.shoe_id
        if self.shoes is not None:
            keep &= pl.struct(pl.col("table_id").alias("t"), pl.col("shoe_id").alias("s")
                              ).is_in(_shoe_keys(self.shoes))
        return keep

    def holds(self, table_id: str, shoe_id: str) -> bool:
        """Whether a shoe is inside the selection (dates aside)."""
        return ((self.table_id is None or table_id == self.table_id)
                and (self.shoe_id is None or shoe_id == self.shoe_id)
                and (self.shoes is None or (table_id, shoe_id) in self.shoes))

    def may_hold(self, entry: FileEntry) -> bool:
        """Whether a file's day can hold coups of the selection (a shoe is filed under the
        day it began and may run past midnight, hence the day's grace)."""
        day = entry.day_date
        if day is None:
            return True
        if self.end is not None and day > self.end:
            return False
        return not (self.start is not None and self.start > date.min
                    and day < self.start - timedelta(days=1))


ALL = Selection()


@dataclass
class Snapshot:
    """What one read sees: the catalogued files it needs, the corrections, the journaled
    shoes not yet sealed (with their events) and which of them are still open."""

    files: list[FileEntry]
    fixes: list[Event]
    touched: set[tuple[str, str]]
    shoes_by_file: dict[str, set[tuple[str, str]]]
    live: dict[tuple[str, str], list[Event]] = field(default_factory=dict)
    open: set[tuple[str, str]] = field(default_factory=set)
    #: Stored shoes imported in parts (:func:`catalog.split_shoes`); known to shoe reads.
    split: set[tuple[str, str]] = field(default_factory=set)

    def clean(self, entry: FileEntry) -> bool:
        """A file no correction touches (its rows are the record as they are)."""
        return not (self.shoes_by_file.get(entry.path, set()) & self.touched)


class Reader:
    """The read port of one store (``store.read``)."""

    def __init__(self, store: Store, recorded: dict[str, FileEntry] | None = None,
                 until: int | None = None) -> None:
        self.store = store
        self.root = store.root
        #: the files as the journal's file events recorded them (a :meth:`checked` reader)
        self._recorded = recorded
        #: the last event this reader sees (an export's signed head: what is dealt,
        #: corrected, sealed or imported meanwhile is not read, nor any file journaled after)
        self._until = until

    def checked(self, until: int) -> Reader:
        """A reader of the same store that parses each file only from bytes it has just
        compared with the journal's file events (size and SHA-256), and refuses a file that
        differs (:class:`StoreReadError`, naming it). What an export signs must come from the
        journaled files: checking a file and then reading it again left a gap in which it
        could be swapped, and restored after the read, unnoticed. Compared with the events
        themselves, not the catalogue (a table anyone with the database can edit); and a file
        the events hold that the catalogue no longer lists is refused too, or its shoes would
        be left out of an export of everything without a word.

        ``until``: the store as of that event (an export's signed head): coups dealt,
        corrections made and files published after it are left out, so a table dealing
        during an export cannot put into the bundle what its journal range does not hold."""
        db = self.store.journal.reader()
        db.execute("BEGIN")  # (the events and the catalogue as of one moment)
        try:
            events = [_event(r) for r in db.execute(
                f"{_SELECT} WHERE kind IN ({','.join('?' * len(FILE_KINDS))}) ORDER BY seq",
                FILE_KINDS).fetchall()]
            listed = {f.path for f in catalog.files(db)}
        finally:
            db.execute("COMMIT")
        everything = catalog.replay(events)
        recorded = catalog.replay(e for e in events if e.seq <= until)
        unlisted = sorted(set(recorded) - listed)
        if unlisted:
            raise StoreReadError(f"{unlisted[0]}: the journal's file events hold this file, but "
                                 f"the catalogue does not list it: {_NOTHING}")
        unjournaled = sorted(listed - set(everything))
        if unjournaled:
            raise StoreReadError(f"{unjournaled[0]}: no journal event records this file: "
                                 f"{_NOTHING}")
        return Reader(self.store, recorded, until)

    def _late(self, db: Any) -> frozenset[str]:
        """The catalogued files this reader does not see: journaled after its head (a seal
        or an import while an export reads); none without a head."""
        if self._until is None or self._recorded is None:
            return frozenset()
        return frozenset(r[0] for r in db.execute("SELECT path FROM catalog")
                         if r[0] not in self._recorded)

    # -- snapshots --------------------------------------------------------------------------
    def snapshot(self, sel: Selection = ALL, table: str = "coups") -> Snapshot:
        db = self.store.journal.reader()
        db.execute("BEGIN")
        try:
            if table == "coups" and sel.by_shoe:
                wanted = set(catalog.files_of_shoes(db, sel.table_id, sel.shoe_id, sel.shoes))
                entries = [f for f in catalog.files(db, "coups") if f.path in wanted]
            else:
                entries = catalog.files(db, table)
            entries = [f for f in entries if sel.may_hold(f)] if table == "coups" else entries
            late = self._late(db)
            entries = [f for f in entries if f.path not in late]
            fixes = [_event(r) for r in db.execute(
                f"{_SELECT} WHERE kind IN ('coup_voided', 'coup_amended')"
                + (" AND table_id = ?" if sel.table_id else "") + self._upto() + " ORDER BY seq",
                (sel.table_id,) if sel.table_id else ()).fetchall()]
            fixes = [e for e in fixes if sel.holds(e.table_id, e.shoe_id or "")]
            touched = touched_shoes(fixes)
            by_file = catalog.shoes_of(db, [f.path for f in entries]) if touched else {}
            live, still_open = self._journaled(db, sel, late)
            split = catalog.split_shoes(db, sel.table_id) if table == "shoes" else set()
        finally:
            db.execute("COMMIT")
        return Snapshot(entries, fixes, touched, by_file, live, still_open, split)

    def _journaled(self, db: Any, sel: Selection, late: frozenset[str] = frozenset()
                   ) -> tuple[dict[tuple[str, str], list[Event]], set[tuple[str, str]]]:
        """Journaled shoes no file holds yet, with their events; and which are open."""
        sql = ("SELECT e.table_id, e.shoe_id FROM events e WHERE e.kind = 'shoe_opened'"
               + (" AND e.table_id = ?" if sel.table_id else "")
               + (" AND e.shoe_id = ?" if sel.shoe_id else "")
               + self._upto("e.seq")
               + " AND NOT EXISTS (SELECT 1 FROM catalog_shoes c WHERE c.table_id = e.table_id"
                 " AND c.shoe_id = e.shoe_id"
               + (" AND c.path NOT IN (SELECT value FROM json_each(?))" if late else "")
               + ") ORDER BY e.seq")
        args: list[Any] = [a for a in (sel.table_id, sel.shoe_id) if a]
        if late:  # (a shoe sealed after the reader's head is still a journaled shoe)
            args.append(json.dumps(sorted(late)))
        unsealed = [(r[0], r[1]) for r in db.execute(sql, args).fetchall()
                    if sel.holds(r[0], r[1])]
        live: dict[tuple[str, str], list[Event]] = {}
        still_open: set[tuple[str, str]] = set()
        for table_id, shoe_id in unsealed:
            events = [_event(r) for r in db.execute(
                f"{_SELECT} WHERE table_id = ? AND shoe_id = ?{self._upto()} ORDER BY seq",
                (table_id, shoe_id)).fetchall()]
            live[(table_id, shoe_id)] = events
            if not any(e.kind == "shoe_closed" for e in events):
                still_open.add((table_id, shoe_id))
        return live, still_open

    def _upto(self, column: str = "seq") -> str:
        """The SQL that keeps events up to the reader's head (none without one)."""
        return "" if self._until is None else f" AND {column} <= {int(self._until)}"

    def _retrying(self, read: Callable[[Snapshot], T], sel: Selection,
                  table: str = "coups") -> T:
        """``read(snapshot)``, started again once if a file went away (a compaction)."""
        for attempt in range(3):
            snap = self.snapshot(sel, table)
            try:
                return read(snap)
            except FileNotFoundError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    # -- files ------------------------------------------------------------------------------
    def _path(self, entry: FileEntry) -> Path:
        return self.root / entry.path

    def _source(self, entry: FileEntry) -> Path | bytes:
        """What a file is parsed from: its path; for a :meth:`checked` reader, its bytes,
        read once and compared with the journal's record of the file."""
        path = self._path(entry)
        if self._recorded is None:
            return path
        data = path.read_bytes()  # (missing: FileNotFoundError, retried as any read is)
        recorded = self._recorded.get(entry.path)
        if recorded is None:  # (journaled after the reader's head: snapshots leave it out)
            raise StoreReadError(f"{entry.path}: no journal event records this file: "
                                 f"{_NOTHING}")
        if len(data) != recorded.bytes:
            raise StoreReadError(f"{entry.path}: holds {len(data):,} bytes; the journal says "
                                 f"{recorded.bytes:,}: {_NOTHING}")
        if hashlib.sha256(data).hexdigest() != recorded.sha256:
            raise StoreReadError(f"{entry.path}: its SHA-256 is not the one the journal "
                                 f"recorded: {_NOTHING}")
        return data

    def _read(self, entry: FileEntry, columns: list[str] | None = None) -> pl.DataFrame:
        table, source = entry.table, self._source(entry)
        try:
            frame = pl.read_parquet(source, columns=columns, glob=False)
        except FileNotFoundError:
            raise
        except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
            raise StoreReadError(f"{entry.path}: cannot be read ({_first_line(exc)}); "
                                 "`roads store verify` names every damaged file") from None
        if columns is None:
            return conform(frame, table)
        return frame

    def _canonical(self, entry: FileEntry, sel: Selection, snap: Snapshot,
                   originals: bool, marked: bool) -> pl.DataFrame:
        frame = self._read(entry)
        if not sel.everything:
            frame = frame.filter(sel.keep())
        if originals:
            return frame
        if snap.clean(entry):
            return frame.with_columns(pl.lit(None, pl.String).alias(MARK)) if marked else frame
        return apply_corrections(frame, snap.fixes, marked)

    def _journaled_coups(self, snap: Snapshot, sel: Selection, originals: bool,
                         marked: bool) -> Iterator[pl.DataFrame]:
        for events in snap.live.values():
            frame = shoe_frames(events)[0]
            frame = frame.filter(sel.keep()) if not sel.everything else frame
            if frame.height or marked:
                frame = frame if originals else apply_corrections(frame, events, marked)
                if frame.height:
                    yield frame.sort("coup")

    # -- coups ------------------------------------------------------------------------------
    def coups(self, sel: Selection = ALL, *, originals: bool = False,
              marked: bool = False) -> pl.DataFrame:
        """The selected coups in (table, shoe, coup) order.

        ``originals``: as entered, no corrections applied; ``marked``: voided coups kept
        and every row marked (:data:`~roads.store.corrections.MARK`)."""
        def read(snap: Snapshot) -> pl.DataFrame:
            frames = [self._canonical(f, sel, snap, originals, marked) for f in snap.files]
            frames += list(self._journaled_coups(snap, sel, originals, marked))
            empty = pl.DataFrame(schema={**COUPS, **({MARK: pl.String} if marked else {})})
            out = pl.concat([empty, *frames], how="vertical") if frames else empty
            return out.sort(*COUP_KEY)
        return self._retrying(read, sel)

    def chunks(self, sel: Selection = ALL, rows: int = CHUNK_ROWS, *,
               marked: bool = False) -> Iterator[pl.DataFrame]:
        """The selected coups a bounded chunk at a time (files in catalogue order, then the
        journaled shoes), corrections applied: memory holds one chunk whatever the range."""
        snap = self.snapshot(sel)
        for entry in snap.files:
            try:
                source = self._source(entry)
                parsed = pq.ParquetFile(pa.BufferReader(source) if isinstance(source, bytes)
                                        else source)
                for batch in _batches(parsed, rows):
                    frame = conform(pl.from_arrow(batch), "coups")  # type: ignore[arg-type]
                    if not sel.everything:
                        frame = frame.filter(sel.keep())
                    if not frame.height:
                        continue
                    if snap.clean(entry):
                        yield frame.with_columns(pl.lit(None, pl.String).alias(MARK)) \
                            if marked else frame
                    else:
                        yield apply_corrections(frame, snap.fixes, marked)
            except (OSError, pa.ArrowException) as exc:
                raise StoreReadError(f"{entry.path}: cannot be read ({_first_line(exc)})"
                                     ) from None
        yield from self._journaled_coups(snap, sel, False, marked)

    def batches(self, sel: Selection = ALL) -> Iterator[pl.DataFrame]:
        """The selected coups file by file (each file holds whole shoes), corrections
        applied, then the journaled shoes: for work that needs whole shoes in bounded
        memory (the integrity checks)."""
        snap = self.snapshot(sel)
        for entry in snap.files:
            frame = self._canonical(entry, sel, snap, False, False)
            if frame.height:
                yield frame
        yield from self._journaled_coups(snap, sel, False, False)

    # -- fast paths -------------------------------------------------------------------------
    def statistics_frames(self, sel: Selection = ALL, *,
                          cards: bool = False) -> Iterator[pl.DataFrame]:
        """Per file, the columns the statistics need (:data:`STATISTICS_COLUMNS` plus each
        coup's card count ``cards``), corrections applied; then the journaled shoes.

        ``cards``: each coup's cards too, as the fixed-width
        :data:`~roads.schema.CARD_SLOTS` (what the integrity checks read), so one read of a
        file serves the statistics and the checks."""
        return (piece for read in self.statistics_readers(sel, cards=cards)
                for piece in read(False))

    def statistics_readers(self, sel: Selection = ALL, *, cards: bool = False
                           ) -> Iterator[Callable[[bool], Iterator[pl.DataFrame]]]:
        """:meth:`statistics_frames` as one reader per file, each reading its file when
        called: several threads can read (and work on) files side by side. ``read(True)``
        gives a clean file in pieces of whole shoes (:func:`statistics_pieces`), bounded
        whatever the file's size; ``read(False)`` gives it in one frame."""
        snap = self.snapshot(sel)
        for _, read in self._statistics_readers(snap, sel, cards):
            yield read

    def _statistics_readers(self, snap: Snapshot, sel: Selection, cards: bool
                            ) -> Iterator[tuple[FileEntry | None,
                                                Callable[[bool], Iterator[pl.DataFrame]]]]:
        """Each reader of :meth:`statistics_readers` with its clean file (None: a corrected
        file or journaled shoes)."""
        def clean(entry: FileEntry, pieces: bool) -> Iterator[pl.DataFrame]:
            path = self._path(entry)
            for frame in (statistics_pieces(path, entry.path, cards) if pieces else
                          [statistics_columns(path, entry.path, cards)]):
                yield frame if sel.everything else frame.filter(sel.keep())

        def corrected(entry: FileEntry, pieces: bool) -> Iterator[pl.DataFrame]:
            yield to_statistics(self._canonical(entry, sel, snap, False, False), cards)

        def journaled(frame: pl.DataFrame, pieces: bool) -> Iterator[pl.DataFrame]:
            yield to_statistics(frame, cards)

        for entry in snap.files:
            yield ((entry, partial(clean, entry)) if snap.clean(entry) else
                   (None, partial(corrected, entry)))
        for frame in self._journaled_coups(snap, sel, False, False):
            yield None, partial(journaled, frame)

    def shoe_columns(self, sel: Selection = ALL
                     ) -> Iterator[Callable[[bool], Iterator[ShoeColumns]]]:
        """:meth:`statistics_readers` (cards included) as
        :class:`~roads.stats.columns.ShoeColumns`, one reader per file. A clean file of a
        selection of everything comes straight from its Arrow buffers, in pieces of whole
        shoes (``read(True)``; ``roads.store.buffers``), which raises ``NotInRuns`` when
        the file's shoes are not runs of rows: ``read(False)`` then reads it through one
        frame. Anything else comes through its statistics frame."""
        from roads.stats.columns import columns_of
        from roads.store.buffers import part_columns

        def arrow(entry: FileEntry, whole: Callable[[bool], Iterator[pl.DataFrame]],
                  pieces: bool) -> Iterator[ShoeColumns]:
            if not pieces:
                yield from framed(whole, False)
                return
            try:
                yield from part_columns(self._path(entry))
            except FileNotFoundError:
                raise
            except (OSError, pa.ArrowException) as exc:
                raise StoreReadError(f"{entry.path}: cannot be read ({_first_line(exc)})") \
                    from None

        def framed(read: Callable[[bool], Iterator[pl.DataFrame]],
                   pieces: bool) -> Iterator[ShoeColumns]:
            for frame in read(pieces):
                if frame.height:
                    yield columns_of(frame)

        snap = self.snapshot(sel)
        for entry, read in self._statistics_readers(snap, sel, True):
            yield (partial(arrow, entry, read) if entry is not None and sel.everything else
                   partial(framed, read))

    def split_shoes(self, sel: Selection = ALL) -> frozenset[tuple[str, str]]:
        """The selection's shoes whose coups lie in more than one file (a shoe imported in
        pieces): work that needs whole shoes reads these whole. One grouped query."""
        found = catalog.split_shoes(self.store.journal.reader(), sel.table_id)
        return frozenset((t, s) for t, s in found if sel.holds(t, s))

    def statistics_sources(self, sel: Selection = ALL
                           ) -> tuple[list[str], list[pl.DataFrame]]:
        """For engines that read files where they run (Spark): the clean files' paths,
        and the rest already read (corrected files, journaled shoes) as statistics frames."""
        snap = self.snapshot(sel)
        paths = [str(self._path(f)) for f in snap.files if snap.clean(f)]
        frames = [to_statistics(self._canonical(f, sel, snap, False, False))
                  for f in snap.files if not snap.clean(f)]
        frames += [to_statistics(f) for f in self._journaled_coups(snap, sel, False, False)]
        return paths, frames

    def outcome_tables(self, sel: Selection = ALL) -> Iterator[pa.Table | pl.DataFrame]:
        """Per file, ``table_id, shoe_id, coup, outcome`` with keys as Parquet dictionaries
        (the bulk roads compare shoes by integer codes); corrected files and journaled shoes
        as canonical frames."""
        snap = self.snapshot(sel)
        for entry in snap.files:
            if snap.clean(entry) and sel.everything:
                yield outcome_columns(self._path(entry), entry.path)
            else:
                yield self._canonical(entry, sel, snap, False, False)
        yield from self._journaled_coups(snap, sel, False, False)

    def outcome_sources(self, sel: Selection = ALL) -> tuple[list[str], list[pl.DataFrame]]:
        """:meth:`statistics_sources` for the bulk roads."""
        snap = self.snapshot(sel)
        paths = [str(self._path(f)) for f in snap.files if snap.clean(f)]
        frames = [self._canonical(f, sel, snap, False, False)
                  for f in snap.files if not snap.clean(f)]
        frames += list(self._journaled_coups(snap, sel, False, False))
        return paths, frames

    # -- shoes ------------------------------------------------------------------------------
    def shoes(self, sel: Selection = ALL) -> pl.DataFrame:
        """Canonical shoe rows of the selection plus ``open`` (a live shoe still in play).

        Stored shoes come from the shoes files; journaled shoes not yet sealed from the
        journal. A date range keeps shoes that began inside it."""
        def read(snap: Snapshot) -> pl.DataFrame:
            frames = [self._read(f).filter(sel.keep_shoes()) for f in snap.files]
            stored = pl.concat(frames) if frames else pl.DataFrame(schema=SHOES)
            stored = stored.with_columns(pl.lit(False).alias("open"))
            live = [shoe_frames(events)[1].with_columns(pl.lit(key in snap.open).alias("open"))
                    for key, events in snap.live.items()]
            out = pl.concat([stored, *live]) if live else stored
            day = pl.col("started_at").dt.date()
            if sel.start is not None:
                out = out.filter(day >= sel.start)
            if sel.end is not None:
                out = out.filter(day <= sel.end)
            if repeats_a_shoe(out):  # a hash table over every shoe only when needed
                out = out.unique(["table_id", "shoe_id"], keep="first", maintain_order=True)
            return self._recounted(out, snap)
        return self._retrying(read, sel, "shoes")

    def _recounted(self, shoes: pl.DataFrame, snap: Snapshot) -> pl.DataFrame:
        """Shoe rows counted from their coups where the stored row cannot say: shoes a
        correction touched count their coups and cards after it (a voided double entry was
        never dealt), and shoes imported in parts also take their first and last coup's
        time from all their coups (the row was written by the first part). The others are
        as stored."""
        if not snap.touched and not snap.split:  # the usual read: no set of every shoe
            return shoes
        keys = set(shoes.select("table_id", "shoe_id").iter_rows())
        touched, split = snap.touched & keys, snap.split & keys
        if not touched and not split:
            return shoes
        cards = pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()
        counts = self.coups(Selection(shoes=frozenset(touched | split))).group_by(
            "table_id", "shoe_id").agg(
            pl.len().cast(pl.Int16).alias("_n"),
            pl.when(pl.col("player_cards").is_not_null().all()).then(cards.sum())
            .cast(pl.Int16).alias("_cards"),
            pl.col("dealt_at").min().alias("_first"), pl.col("dealt_at").max().alias("_last"))
        flags = {"table_id": pl.String, "shoe_id": pl.String, "_split": pl.Boolean,
                 "_touched": pl.Boolean}
        marks = pl.DataFrame([(t, s_, (t, s_) in split, (t, s_) in touched)
                              for t, s_ in split | touched], schema=flags, orient="row")
        found = pl.col("_n").is_not_null()
        # (a shoe whose every coup a correction voided has none left: it dealt nothing)
        emptied = ~found & pl.col("_touched").fill_null(False)
        in_parts = pl.col("_split").fill_null(False)
        return (shoes.join(counts, on=["table_id", "shoe_id"], how="left",
                           maintain_order="left")
                .join(marks, on=["table_id", "shoe_id"], how="left", maintain_order="left")
                .with_columns(
                    pl.when(found).then("_n").when(emptied).then(pl.lit(0, pl.Int16))
                    .otherwise("coups").alias("coups"),
                    *([pl.when(found).then("_cards").when(emptied).then(None)
                       .otherwise("cards_dealt").alias("cards_dealt")]
                      if "cards_dealt" in shoes.columns else []),
                    pl.when(in_parts).then(pl.min_horizontal("started_at", "_first"))
                    .otherwise("started_at").alias("started_at"),
                    pl.when(in_parts).then(pl.max_horizontal("ended_at", "_last"))
                    .otherwise("ended_at").alias("ended_at"))
                .drop("_n", "_cards", "_first", "_last", "_split", "_touched"))

    def shoe_page(self, table_id: str | None = None, start: date | None = None,
                  end: date | None = None, still_open: bool | None = None, offset: int = 0,
                  limit: int = 50) -> tuple[pl.DataFrame, int]:
        """One page of the record's shoes, newest first, and how many match: the journaled
        shoes not yet sealed (open ones first), then the stored shoes from the shoe index
        (never their files), so a page of 100,000 shoes costs one indexed query.

        ``still_open``: True for the shoes in play only, False for the closed ones only."""
        db = self.store.journal.reader()
        db.execute("BEGIN")
        try:
            live, open_keys = self._journaled(db, Selection(table_id))
            where, args = ["1=1"], []
            if table_id is not None:
                where.append("table_id = ?")
                args.append(table_id)
            if start is not None:  # ISO text compares as time: a range on the index
                where.append("started_at >= ?")
                args.append(start.isoformat())
            if end is not None and end < date.max:  # nothing begins after the last day
                where.append("started_at < ?")
                args.append((end + timedelta(days=1)).isoformat())
            clause = " AND ".join(where)
            stored_total = 0 if still_open else int(db.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM shoe_index WHERE {clause} "
                "GROUP BY table_id, shoe_id)", args).fetchone()[0])
            fixes = [_event(r) for r in db.execute(
                f"{_SELECT} WHERE kind IN ('coup_voided', 'coup_amended') ORDER BY seq")]
            journaled = [shoe_frames(events)[1].with_columns(
                pl.lit(key in open_keys).alias("open")) for key, events in live.items()
                if still_open is None or (key in open_keys) == still_open]
            journaled_rows = pl.concat(journaled) if journaled else pl.DataFrame(
                schema={**SHOES, "open": pl.Boolean})
            day = journaled_rows["started_at"].dt.date()
            if start is not None:
                journaled_rows = journaled_rows.filter(day >= start)
                day = journaled_rows["started_at"].dt.date()
            if end is not None:
                journaled_rows = journaled_rows.filter(day <= end)
            journaled_rows = journaled_rows.sort("open", "started_at", descending=True,
                                                 nulls_last=True)
            first = journaled_rows.slice(offset, limit)
            want = limit - first.height
            skip = max(0, offset - journaled_rows.height)
            stored_rows: list[tuple[Any, ...]] = []
            if want > 0 and not still_open:
                # newest first straight off the index; a shoe listed by two files (which
                # `store verify` reports) shows once, by its first file
                stored_rows = db.execute(
                    "SELECT table_id, shoe_id, rules, decks, coups, started_at, ended_at, "
                    f"source FROM shoe_index s WHERE {clause} AND path = (SELECT min(path) "
                    "FROM shoe_index x WHERE x.table_id = s.table_id AND x.shoe_id = "
                    "s.shoe_id) ORDER BY started_at DESC, table_id, shoe_id LIMIT ? OFFSET ?",
                    [*args, want, skip]).fetchall()
            split = catalog.split_shoes(db, keys=[(r[0], r[1]) for r in stored_rows])
        finally:
            db.execute("COMMIT")
        stored = _index_frame(stored_rows)
        live_page = first.select(*PAGE_COLUMNS).with_columns(
            pl.col("source").cast(pl.String)).cast(PAGE_COLUMNS)  # type: ignore[arg-type]
        page = pl.concat([live_page, stored])
        touched = touched_shoes(fixes)
        snap = Snapshot([], fixes, touched, {}, split=split)
        return self._recounted(page, snap), journaled_rows.height + stored_total

    def tables(self) -> list[str]:
        """Every table of the record: stored shoes' tables and the journal's."""
        db = self.store.journal.reader()
        stored = {r[0] for r in db.execute("SELECT DISTINCT table_id FROM shoe_index")}
        return sorted(stored | set(self.store.journal.tables()))

    def stored_coups(self, keys: pl.DataFrame) -> pl.DataFrame:
        """The stored coups (as entered) of the shoes in ``keys`` (``table_id, shoe_id``):
        only the files the catalogue says hold them are read."""
        if keys.is_empty():
            return pl.DataFrame(schema=COUPS)
        db = self.store.journal.reader()
        paths = catalog.files_of_shoes(db, None, None, keys.select("table_id", "shoe_id")
                                       .unique().iter_rows())
        entries = {f.path: f for f in catalog.files(db, "coups")}
        frames = [self._read(entries[p]).join(keys.lazy().collect(), on=["table_id", "shoe_id"],
                                              how="semi") for p in paths if p in entries]
        return pl.concat(frames) if frames else pl.DataFrame(schema=COUPS)

    def stored_shoe_keys(self, keys: pl.DataFrame) -> pl.DataFrame:
        """``table_id, shoe_id`` of the shoes in ``keys`` that have a stored shoe row (the
        catalogue's shoe index is keyed by shoe: no file is read, and the answer's size is
        the question's, not the store's)."""
        found = catalog.holding(self.store.journal.reader(), "shoe_index",
                                keys.select("table_id", "shoe_id").unique().iter_rows())
        return pl.DataFrame([r[:2] for r in found], schema={"table_id": pl.String,
                                                            "shoe_id": pl.String},
                            orient="row").unique()

    def journal_shoes(self) -> set[tuple[str, str]]:
        """Every shoe the journal holds as a live shoe (open, closed or sealed)."""
        return {(r[0], r[1]) for r in self.store.journal.reader().execute(
            "SELECT DISTINCT table_id, shoe_id FROM events WHERE kind = 'shoe_opened'")}

    def files_holding(self, keys: set[tuple[str, str]]) -> list[dict[str, Any]]:
        """The catalogue entries of the coups files that hold any of these shoes."""
        db = self.store.journal.reader()
        paths = set(catalog.files_of_shoes(db, None, None, keys)) - self._late(db)
        return [f.to_json() for f in catalog.files(db, "coups") if f.path in paths]

    def file_coups(self, path: str) -> pl.DataFrame:
        """Every coup of one catalogued file, as entered."""
        entries = {f.path: f for f in catalog.files(self.store.journal.reader(), "coups")}
        if path not in entries:
            raise StoreReadError(f"{path} is not a stored coups file")
        return self._read(entries[path])

    def checkpoints(self) -> list[dict[str, Any]]:
        """The store's signed checkpoints of the journal's head."""
        from roads.store import checkpoint

        return [c.to_json() for c in checkpoint.read(
            self.root / checkpoint.DIRECTORY / checkpoint.FILE)]

    def public_key(self) -> bytes:
        """The store's checkpoint key (PEM), which verifies the checkpoints."""
        from roads.store import checkpoint

        return (self.root / checkpoint.PUBLIC).read_bytes()

    def corrections(self, sel: Selection = ALL) -> list[Event]:
        """The voids and amendments of the selection's shoes, in journal order."""
        return corrections(self.snapshot(sel).fixes)


#: The coup columns the statistics read; the card lists are read only to count them.
STATISTICS_COLUMNS = ("table_id", "shoe_id", "coup", "outcome", "player_total",
                      "banker_total", "natural", "player_pair", "banker_pair", "dealt_at")


def to_statistics(coups: pl.DataFrame, cards: bool = False) -> pl.DataFrame:
    """Canonical coups in the shape of :func:`statistics_columns`."""
    count = (pl.col("player_cards").list.len() + pl.col("banker_cards").list.len())
    slots = [pl.col(f"{side}_cards").list.get(i, null_on_oob=True).to_physical()
             .fill_null(NO_CARD).cast(pl.UInt8).alias(f"{side}_{i + 1}")
             for side in ("player", "banker") for i in range(3)] if cards else []
    return coups.select(*STATISTICS_COLUMNS, count.cast(pl.Int8).alias("cards"), *slots)


def _card_slots(lists: pa.ChunkedArray, side: str) -> list[pl.Series]:
    """One hand's card lists (dictionary-encoded card codes) as three slot columns, straight
    from the Arrow buffers: offsets and dictionary indices, no list decoded in Python."""
    from roads.cards import CARD_INDEX

    columns: list[list[np.ndarray]] = [[], [], []]
    for chunk in lists.chunks:
        offsets = np.asarray(chunk.offsets)
        values = chunk.values
        lut = np.array([*(CARD_INDEX[c] for c in values.dictionary.to_pylist()), NO_CARD],
                       dtype=np.uint8)
        codes = lut[np.asarray(values.indices)]
        start, length = offsets[:-1], np.diff(offsets)
        last = max(len(codes) - 1, 0)
        for j in range(3):
            held = codes[np.minimum(start + j, last)] if len(codes) else \
                np.full(len(start), NO_CARD, dtype=np.uint8)
            columns[j].append(np.where(length > j, held, np.uint8(NO_CARD)))
    return [pl.Series(f"{side}_{j + 1}", np.concatenate(c) if c else np.zeros(0, np.uint8))
            for j, c in enumerate(columns)]


def statistics_columns(path: Path, name: str | None = None, cards: bool = False,
                       groups: tuple[int, int] | None = None) -> pl.DataFrame:
    """One part file as the statistics need it: the scalar columns, plus each coup's card
    count (``cards``) instead of the cards. Counting list entries in Arrow, with the card
    codes left dictionary-encoded, is about twice as fast as decoding them into polars.
    ``cards``: the :data:`~roads.schema.CARD_SLOTS` too, from the same Arrow read;
    ``groups``: only row groups ``first``..``last - 1``.

    The two reads are joined by file row number (polars' row index), never by position,
    so a scan that returned rows in another order could not misalign them."""
    import pyarrow.compute as pc

    try:
        with pq.ParquetFile(path, read_dictionary=["player_cards.list.element",
                                                   "banker_cards.list.element"]) as file:
            first, last = groups or (0, file.num_row_groups)
            sizes = [file.metadata.row_group(i).num_rows for i in range(file.num_row_groups)]
            offset, rows = sum(sizes[:first]), sum(sizes[first:last])
            # row group by row group: a whole-file read of dictionary-encoded lists fails
            # ("nested data conversions") once they need more than one chunk
            lists = pa.concat_tables([file.read_row_group(i, columns=["player_cards",
                                                                      "banker_cards"])
                                      for i in range(first, last)]) \
                if last > first else file.read(columns=["player_cards", "banker_cards"])
        scan = pl.scan_parquet(path, schema=pl.Schema(COUPS), row_index_name="_row",
                               glob=False)
        if groups is not None:
            scan = scan.slice(offset, rows)
        frame = scan.select("_row", *STATISTICS_COLUMNS).collect()
    except FileNotFoundError:
        raise
    except (pl.exceptions.PolarsError, OSError, pa.ArrowException) as exc:
        raise StoreReadError(f"{name or path}: cannot be read ({_first_line(exc)})") from None
    count = pl.Series("cards", pc.add(pc.list_value_length(lists["player_cards"]),
                                      pc.list_value_length(lists["banker_cards"])))
    order = frame["_row"] - offset
    slots = [s.gather(order) for side in ("player", "banker")
             for s in _card_slots(lists[f"{side}_cards"], side)] if cards else []
    return frame.with_columns(count.cast(pl.Int8).gather(order), *slots).drop("_row")


#: Rows the statistics read of a file at a time (whole row groups, then whole shoes).
PIECE_ROWS = 150_000


def statistics_pieces(path: Path, name: str | None = None, cards: bool = False,
                      rows: int | None = None) -> Iterator[pl.DataFrame]:
    """:func:`statistics_columns` of one file a few row groups at a time, in whole shoes
    when each shoe's rows are one run (as the store writes them): the rows of the shoe a
    piece ends in wait for the next piece. So memory holds a piece, not a file. (A shoe
    whose rows come back in two pieces, in a file written otherwise, is for the caller to
    notice: its keys repeat across pieces.)"""
    try:
        meta = pq.read_metadata(path)
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise StoreReadError(f"{name or path}: cannot be read ({_first_line(exc)})") from None
    spans, first, held = [], 0, 0
    for i, n in enumerate(sizes):
        held += n
        if held >= (rows or PIECE_ROWS) or i == len(sizes) - 1:
            spans.append((first, i + 1))
            first, held = i + 1, 0
    if len(spans) <= 1:
        yield statistics_columns(path, name, cards)
        return
    carry: pl.DataFrame | None = None
    for n, span in enumerate(spans):
        frame = statistics_columns(path, name, cards, span)
        if carry is not None:
            frame = pl.concat([carry, frame])
        if n == len(spans) - 1:
            yield frame
            break
        table, shoe = frame.row(frame.height - 1)[:2]
        other = np.flatnonzero(((frame["table_id"] != table) | (frame["shoe_id"] != shoe))
                               .to_numpy())
        cut = int(other[-1]) + 1 if len(other) else 0
        carry = frame.slice(cut)
        if cut:
            yield frame.slice(0, cut)


def outcome_columns(path: Path, name: str | None = None) -> pa.Table:
    """``table_id, shoe_id, coup, outcome`` of one part file, keys as dictionaries."""
    try:
        return pq.read_table(path, columns=["table_id", "shoe_id", "coup", "outcome"],
                             read_dictionary=["table_id", "shoe_id", "outcome"])
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise StoreReadError(f"{name or path}: cannot be read ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


PAGE_COLUMNS = {"table_id": pl.String, "shoe_id": pl.String, "rules": pl.String,
                "decks": pl.Int8, "coups": pl.Int16, "started_at": pl.Datetime("us", "UTC"),
                "ended_at": pl.Datetime("us", "UTC"), "source": pl.String, "open": pl.Boolean}


def _index_frame(rows: list[tuple[Any, ...]]) -> pl.DataFrame:
    """Shoe index rows (times as ISO text) as a page of shoes (closed: not open)."""
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                       "rules": pl.String, "decks": pl.Int64,
                                       "coups": pl.Int64, "started_at": pl.String,
                                       "ended_at": pl.String, "source": pl.String},
                         orient="row")
    return frame.with_columns(
        pl.col("started_at", "ended_at").str.to_datetime(time_unit="us", time_zone="UTC"),
        pl.lit(False).alias("open")).cast(PAGE_COLUMNS)  # type: ignore[arg-type]
