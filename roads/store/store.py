"""The store: canonical Parquet files that answer to the journal, and the journal itself.

Layout under the store root::

    store.json                              what this directory is (format, purpose)
    journal.sqlite                          the journal (hash-chained events) and, beside
                                            it, the catalogue of stored files
    coups/date=YYYY-MM-DD/part-*.parquet    canonical coups (date: the day the shoe began;
                                            for a live shoe, by the journal's clock)
    shoes/date=YYYY-MM-DD/part-*.parquet    canonical shoes
    checkpoints/checkpoints.jsonl           signed heads of the journal
    keys/                                   the store's checkpoint signing key
    ingest/ quarantine/ flags/              ingest reports, rejected rows, rule findings
    auth.sqlite logins.sqlite .bulk.lock    accounts, the login limiter, the bulk writers' lock

Every file is written whole under a hidden name, then journaled with its SHA-256, size, rows
and content digest in one event that also updates the catalogue; readers list files only
from the catalogue (:mod:`roads.store.read`). So a write is visible all at once or not at
all, a leftover of a crash is never read, and ``roads store verify`` can account for every
byte. Sealed Parquet holds coups as entered; corrections live in the journal and are applied
by the read port.
"""

from __future__ import annotations

import atexit
import dataclasses
import fcntl
import functools
import hashlib
import io
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from roads import faults
from roads.errors import InputError, JournalBusy, JournalRewritten, UnsignedCommit
from roads.files import fsync_dir, publish_text, sha256, sync_all, temporary_name
from roads.schema import SCHEMA_VERSION, SHOE_KEY, conform, provenance, shoe_runs
from roads.store import catalog, checkpoint
from roads.store.catalog import INDEX_SCHEMA, KEYS, UNDATED, FileEntry
from roads.store.checkpoint import Checkpoint
from roads.store.digest import combine, lines_digest, shoe_digests, shoe_lines, shoes_digest
from roads.store.journal import (
    FILE_KINDS,
    SYSTEM,
    Action,
    Event,
    Journal,
    Transaction,
    bulk_cache,
)
from roads.store.journal_queue import close_lock, lock_within, open_lock
from roads.store.journaled import (
    Content,
    arrow_part,
    coups_frame,
    sealed_content,
    shoe_frame,
    shoe_records,
)
from roads.store.layout import (
    ATTACHMENTS,
    BULK_LOCK,
    WRITERS_LOCK,
    Listing,
    part_name,
    relative_path,
    temporary_target,
    walk,
)
from roads.store.lock_holders import lock_busy
from roads.store.read import Reader

#: Part files: zstd at its fastest level (the bulk readers are I/O-light already).
COMPRESSION: Final = "zstd"
COMPRESSION_LEVEL = 1
#: Column statistics in part files: null counts only. Min/max cost a third of an engine
#: part's encoding (most of it the card lists', which no filter can use), and no reader
#: needs them: the catalogue says which files hold a shoe and the port reads files whole.
STATISTICS: Final = {"min": False, "max": False, "distinct_count": False, "null_count": True}
MARKER = checkpoint.MARKER
JOURNAL = "journal.sqlite"
FORMAT = "roads-store-2"


class NoStore(InputError):
    """A path that holds no store (a read never creates one)."""


class StoreError(InputError):
    """A write the store refuses (a damaged file it would build on, a shoe not closed)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One file to write: a canonical table's rows for one day under one name."""

    table: str
    day: str
    name: str
    frame: pl.DataFrame | pa.Table  # Arrow: typed as the file holds it (journaled.arrow_part)
    metadata: dict[str, str] = field(default_factory=dict)
    #: What the file holds, when whoever cut the part digested it already (see
    #: :meth:`Store.parts_by_day`); None: the writer digests it.
    content: Content | None = None

    @property
    def path(self) -> str:
        return relative_path(self.table, self.day, self.name)


@dataclass(frozen=True, slots=True)
class Written:
    """A part file on disk, not yet journaled (invisible to readers until committed).

    ``shoes``: the (table_id, shoe_id) a coups file holds; ``index``: a shoes file's rows as
    the shoe index keeps them. Frames, not Python tuples: a commit that is not staged (a
    seal, a compaction, a Spark engine run, whose executors hand their files back) holds
    them until it journals the files, and a frame costs a tenth of the memory. A staged run
    (an ingest, a local engine run) hands them to :meth:`Store.stage` as each file is done
    and keeps only the entry."""

    entry: FileEntry
    shoes: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=KEYS))
    index: pl.DataFrame | None = None
    durable: bool = True  # False: in place but not yet fsynced (the commit syncs it first)
    #: Where the file waits under a hidden name of its own until the commit that journals
    #: it publishes it (a seal: see :meth:`Store.commit`); None once it is in place.
    hidden: str | None = None

    @property
    def on_disk(self) -> str:
        """Where the file is now (relative to the store)."""
        return self.hidden or self.entry.path

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry.to_json(), "shoes": self.shoes.rows(),
                "index": [] if self.index is None else self.index.rows()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Written:
        index = data.get("index") or None
        return cls(FileEntry.from_json(data["entry"]),
                   pl.DataFrame(data["shoes"], schema=KEYS, orient="row"),
                   None if index is None else pl.DataFrame(index, schema=INDEX_SCHEMA,
                                                           orient="row"))


#: An event to journal ahead of a commit's own: kind, table, shoe, payload.
Preceding = tuple[str, str, str | None, dict[str, Any]]
#: How a commit's transaction is run: :meth:`Journal.run`, or a service's shared commit.
Run = Callable[[Action], Event]


def write_part(root: Path, part: Part, source: str, durable: bool = True,
               content: Content | None = None, hidden: bool = False) -> Written:
    """Write one part file under ``root`` (whole or absent); nothing is journaled. Engines
    that write where they run (Spark executors) call this and hand the result back.

    ``durable=False``: the file is not fsynced here; :meth:`Store.commit` syncs it (with the
    run's other files, side by side) before it journals it. Until then it is a file no
    event names, as after any crash before a commit. ``content``: what the file holds, when
    the caller made it already (a seal: :func:`~roads.store.journaled.sealed_content`).
    ``hidden``: left under its hidden temporary name, for the commit to publish."""
    meta = provenance(table=part.table, source=source, **part.metadata)
    frame = part.frame if isinstance(part.frame, pa.Table) else conform(part.frame, part.table)
    content = part.content if content is None else content
    if content is None:
        if isinstance(frame, pa.Table):
            raise ValueError("an Arrow part's content is made by its caller (sealed_content)")
        content = _coups_content(shoe_digests(frame)) if part.table == "coups" else Content(
            shoes_digest(frame), pl.DataFrame(schema=KEYS), _compact(shoe_index_frame(frame)))
    digest, shoes, index = content.digest, content.shoes, content.index
    sha, size, at = _write(root / part.path, frame, meta, durable, publish=not hidden)
    faults.point("store:part-written")
    return Written(FileEntry(part.path, part.table, sha, size, len(frame), digest, part.day,
                             source), shoes, index, durable,
                   at.relative_to(root).as_posix() if hidden else None)


def _coups_content(per_shoe: pl.DataFrame) -> Content:
    """A coups part's :class:`Content` from its shoes' digests (``shoe_digests`` rows)."""
    return Content(combine(per_shoe), _compact(per_shoe.select(*SHOE_KEY)))


def _compact(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` in buffers of its own: a selection of polars strings keeps viewing the
    buffers of the whole frame it came from (a run holding every part's shoe keys until
    its commit would hold every part's coups)."""
    return pl.from_arrow(frame.to_arrow())  # type: ignore[return-value]


@functools.cache
def _writers() -> ThreadPoolExecutor:
    """The process's part writers, kept: a pool per call started fresh threads for every
    batch, and each new thread's allocator arena held on to memory (an engine run grew by
    ~35 MB a batch). Two: polars and pyarrow encode in parallel already.

    Shut down at exit (its idle threads would otherwise keep a joining exit waiting
    forever), and forgotten in a forked child, where its threads do not exist."""
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="part-writer")
    atexit.register(pool.shutdown)
    return pool


os.register_at_fork(after_in_child=_writers.cache_clear)


def shoe_index_frame(shoes: pl.DataFrame) -> pl.DataFrame:
    """A shoes file's rows as the shoe index keeps them (times as ISO text, UTC)."""
    iso = "%Y-%m-%dT%H:%M:%S%.6f+00:00"
    return shoes.select(
        "table_id", "shoe_id", "rules", pl.col("decks").cast(pl.Int64),
        pl.col("coups").cast(pl.Int64), pl.col("started_at").dt.to_string(iso),
        pl.col("ended_at").dt.to_string(iso), pl.col("source").cast(pl.String))


#: Catalogue rows from which a commit takes a large page cache (a seal records a few).
BULK_ROWS = 2000


class Store:
    """One store directory. Open an existing one with :meth:`open`, make one with
    :meth:`create` (only writing commands do)."""

    def __init__(self, root: Path, journal: Journal) -> None:
        self.root = root
        self.journal = journal
        self._taker, self._taker_pid = threading.Lock(), os.getpid()  # (see writing)
        catalog.install(journal.connection())
        self.read = Reader(self)

    @classmethod
    def open(cls, root: Path) -> Store:
        """The store at ``root``; :class:`NoStore` when there is none (nothing is created)."""
        if not (root / JOURNAL).is_file():
            raise NoStore(f"no store at {root}")
        return cls(root, Journal(root / JOURNAL))

    @classmethod
    def create(cls, root: Path, purpose: str = "") -> Store:
        """The store at ``root``, made if there is none (``purpose``: e.g. ``demo``).

        ``store.json`` is bound to the checkpoints: its digest is signed in a checkpoint
        before the file is written (and carried by every later one), so an edit of it is
        named; a write of it killed before the rename leaves the old file (or none), which
        verify names and the next writing command writes again."""
        fresh = not (root / JOURNAL).is_file()
        root.mkdir(parents=True, exist_ok=True)
        store = cls(root, Journal(root / JOURNAL))
        checkpoint.create_keys(root)
        if fresh or not (root / MARKER).exists() or (purpose and store.purpose != purpose):
            text = json.dumps({
                "format": FORMAT, "schema_version": SCHEMA_VERSION, "purpose": purpose,
                "created_at": datetime.now(UTC).isoformat(timespec="seconds")}, indent=2)
            # signed as every write signs (never over removed checkpoints: then nothing is
            # signed, and verify goes on naming them)
            with store.writing():  # (its hidden file is in flight until the rename)
                store.sign_head(hashlib.sha256(text.encode()).hexdigest())
                faults.point("store:marker-signed")
                publish_text(root / MARKER, text)
        return store

    @property
    def purpose(self) -> str:
        """What ``store.json`` says the store is for, when it is the file the checkpoints
        signed (:func:`checkpoint.signed_marker`; an edited one, or one of a store whose
        checkpoints were removed, says nothing: a real store relabelled ``demo`` is not
        the demo's)."""
        try:
            data = (self.root / MARKER).read_bytes()
        except OSError:
            return ""
        points = self.root / checkpoint.DIRECTORY / checkpoint.FILE
        signed = checkpoint.signed_marker(points)
        if signed is None and not points.exists() and self.journal.head()[0] > 0:
            return ""  # checkpoints removed: nothing vouches for the file
        if signed is not None and hashlib.sha256(data).hexdigest() != signed:
            return ""
        try:
            return str(json.loads(data).get("purpose", ""))
        except (ValueError, AttributeError):
            return ""

    # -- writing ----------------------------------------------------------------------------
    @contextmanager
    def bulk_lock(self) -> Iterator[None]:
        """One bulk writer at a time (ingest, engine runs, compaction, purge): each sweeps
        the leftovers of its kind, which must not be another run's files in flight.

        Waited for as long as the journal's queue is (:attr:`Journal.queue_wait`), then
        :class:`JournalBusy` naming the lock and who holds it: a blocking ``flock`` waited
        for as long as the run ahead took (or for ever behind a stopped one) with nothing
        said; a second run is started again once the first has ended."""
        path = self.root / BULK_LOCK
        with self.writing():
            deadline = time.monotonic() + self.journal.queue_wait

            def busy() -> JournalBusy:
                return lock_busy("the store is busy: another bulk run (an ingest, an engine "
                                 "run, a compaction or a purge) holds its bulk lock", path,
                                 then="try again when it has ended")

            fd = open_lock(path)
            lock_within(fd, fcntl.LOCK_EX, deadline, busy, lambda: close_lock(fd), str(path))
            try:
                yield
            finally:
                close_lock(fd)  # (releases the lock)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Held (shared, by any number of writers) while a writer's files are in flight (a
        seal's hidden files, a bulk run's): ``store verify`` looks again at what it found
        while one holds it, until the write ends (the lock goes with its process), and
        names at once what it finds when none does.

        Waited for as long as the journal's queue is (:attr:`Journal.queue_wait`), then
        :class:`JournalBusy`: anyone who can open the file can hold it exclusively, and a
        blocking ``flock`` would hold every seal (a server's request threads) and a
        start-up's recovery for as long as they did. Made readable by the store's owner
        only, for that reason. A process's writers take it one at a time (a mutex held only
        until the lock is theirs), so one helper thread at most waits for it per process:
        given up, the helper keeps the mutex until its ``flock`` returns, and the writers
        after it give up on the mutex instead of each leaving a thread blocked behind the
        holder. Every such write signs the journal's head: a signing key that is not the
        store's is refused here, before anything is written (:func:`checkpoint.signing_key`)."""
        checkpoint.signing_key(self.root)
        path = self.root / WRITERS_LOCK
        wait = self.journal.queue_wait
        deadline = time.monotonic() + wait

        def busy() -> JournalBusy:
            return lock_busy("the store is busy: a process holds its writers' lock", path,
                             after=" exclusively")

        if self._taker_pid != os.getpid():  # forked: the parent's mutex is its own
            self._taker, self._taker_pid = threading.Lock(), os.getpid()
        taker = self._taker
        if not taker.acquire(timeout=max(wait, 0.0)):
            raise busy()
        try:
            fd = open_lock(path)
        except BaseException:
            taker.release()
            raise

        def abandon() -> None:  # (the helper's, once its flock returns, when given up)
            close_lock(fd)
            taker.release()

        lock_within(fd, fcntl.LOCK_SH, deadline, busy, abandon, str(path))
        taker.release()
        try:
            yield
        finally:
            close_lock(fd)  # (releases the lock)

    def writer_running(self) -> bool:
        """Whether a writer holds :meth:`writing` now (a bulk run does, under
        :meth:`bulk_lock`; a read: nothing made)."""
        return _held(self.root / WRITERS_LOCK)

    @contextmanager
    def staging(self) -> Iterator[catalog.StagedRows]:
        """Stage a bulk run's shoe rows as its files are written (this thread's connection;
        commit them with ``commit(..., staged=...)`` on the same thread)."""
        rows = catalog.StagedRows(self.journal.connection())
        try:
            yield rows
        finally:
            rows.close()

    def stage(self, staged: catalog.StagedRows, written: Sequence[Written]) -> list[Written]:
        """Stage written files' shoe rows; returns the files without them (what a run
        keeps for its commit: flat in the number of shoes)."""
        for w in written:
            staged.add(w.entry.path, w.shoes, w.index)
        return [Written(w.entry, durable=w.durable) for w in written]

    def write_parts(self, parts: Sequence[Part], source: str, durable: bool = True,
                    contents: Sequence[Content | None] | None = None,
                    hidden: bool = False) -> list[Written]:
        """Write part files side by side (each whole or absent); nothing is journaled yet.
        ``durable``, ``contents`` (one per part, None where the writer makes it),
        ``hidden``: see :func:`write_part`."""
        if len(parts) == 1:
            return [write_part(self.root, parts[0], source, durable,
                               contents[0] if contents else None, hidden)]
        return [f.result() for f in self.start_parts(parts, source, durable, contents, hidden)]

    def start_parts(self, parts: Sequence[Part], source: str, durable: bool = True,
                    contents: Sequence[Content | None] | None = None, hidden: bool = False
                    ) -> list[Future[Written]]:
        """:meth:`write_parts` in the background: the caller goes on (an ingest checks its
        next bucket while this one's files are encoded and digested). ``durable``,
        ``contents``, ``hidden``: see :func:`write_part`."""
        pool = _writers()
        return [pool.submit(write_part, self.root, part, source, durable,
                            contents[i] if contents else None, hidden)
                for i, part in enumerate(parts)]

    def commit(self, kind: str, written: Sequence[Written], payload: dict[str, Any],
               actor: str | None, table_id: str = SYSTEM, shoe_id: str | None = None,
               removed: Sequence[str] = (), kept_since: str | None = None,
               sign: bool = True, before: Sequence[Preceding] = (),
               staged: catalog.StagedRows | None = None, run: Run | None = None,
               unless: Callable[[Transaction], Event | None] | None = None) -> Event:
        """Journal written files (and removed ones) in one event; the catalogue changes in
        the same transaction, so readers see all of it or none of it.

        ``before``: events journaled first in that transaction, by the same actor, so they
        become visible with the files and never without them (an import's amendments).
        ``staged``: the files' shoe rows, staged as they were written (:meth:`staging`);
        the ``written`` then need not carry them.
        ``run``: how the transaction runs (a live service's shared commit, so a seal takes
        no write lock and no fsync of its own); by default a transaction of its own, and
        always for a bulk or staged commit (one large transaction would hold up every
        coup of the shared one).
        ``unless``: asked inside the transaction, under its write lock; an event it returns
        (a seal another writer committed since the caller looked) is returned instead,
        and nothing is journaled.

        Files ``written`` hidden (a seal's) are published inside the transaction, under its
        write lock, once ``unless`` found nothing: two writers of one name (two seals of a
        shoe) never replace each other's published file, and the one that lost discards
        its own. (The rename rides on the commit's own sync on a journaling file system;
        should a power cut lose it anyway, :meth:`sweep_stored` puts the file in place.)"""
        if staged is not None and any(w.shoes.height or w.index is not None for w in written):
            raise ValueError("a staged commit takes its files' shoe rows from the staging "
                             "tables only: stage every file (Store.stage) before committing")
        entries = [w.entry if kept_since is None else
                   FileEntry(**{**w.entry.to_json(), "kept_since": kept_since})
                   for w in written]
        body = {**payload, "files": [e.to_json() for e in entries],
                **({"removed": list(removed)} if removed else {})}
        sync_all(self.root / w.on_disk for w in written if not w.durable)
        hidden = [w for w in written if w.hidden is not None]
        rows: catalog.ShoeRows | catalog.StagedRows
        if staged is not None:
            rows, count = staged, staged.rows
        else:
            rows = catalog.shoe_rows(
                entries, {w.entry.path: w.shoes for w in written},
                {w.entry.path: w.index for w in written if w.index is not None})
            count = sum(w.shoes.height + (0 if w.index is None else w.index.height)
                        for w in written)
        bulk = count > BULK_ROWS
        shared = run is not None and not bulk and staged is None
        if shared:  # a shared commit may run its actions twice (journal.GroupCommitter)
            assert isinstance(rows, catalog.ShoeRows)
            rows = catalog.ShoeRows(list(rows.shoes), list(rows.index))

        def action(tx: Transaction) -> Event:
            if unless is not None and (done := unless(tx)) is not None:
                return done
            for w in hidden:
                _publish(self.root, w)
            if hidden:
                faults.point("seal:published")  # renamed, not yet committed
            for kind_before, table_before, shoe_before, payload_before in before:
                tx.append(kind_before, table_before, shoe_before, payload_before, actor)
            if before:
                faults.point("store:committing")  # inside the transaction: rolled back
            event = tx.append(kind, table_id, shoe_id, body, actor)
            catalog.record(tx.db, event.seq, event.at, entries, rows, removed)
            return event

        try:
            if shared:
                assert run is not None
                event = run(action)
            else:
                with bulk_cache(self.journal.connection()) if bulk else nullcontext():
                    event = self.journal.run(action)
        finally:
            # Never published (lost to another writer, or the commit failed: a busy journal
            # queue, a full disk): a published file is under its name, not the hidden one.
            for w in hidden:
                (self.root / str(w.hidden)).unlink(missing_ok=True)
        faults.point("store:committed")
        if sign:
            try:
                self.sign_head()
            except OSError as exc:
                raise UnsignedCommit(
                    f"{kind} is committed (journal event {event.seq}), but its checkpoint "
                    f"could not be written ({exc.filename or ''}: {exc.strerror or exc}): "
                    "the store's next write signs it; `roads store verify` names it "
                    "unsigned until then") from None
            except JournalRewritten as exc:
                raise UnsignedCommit(f"{kind} is committed (journal event {event.seq}), but "
                                     f"not signed: {exc}") from None
        return event

    def checkpoint(self, marker: str | None = None) -> checkpoint.Checkpoint:
        """Sign the journal's head, whatever precedes it (``marker``: see
        :func:`checkpoint.write`'s ``store``; the store's own writes sign through
        :meth:`sign_head`, which does not cover up removed checkpoints)."""
        return checkpoint.write(self.root, self.journal, marker)

    def sign_head(self, marker: str | None = None) -> Checkpoint | None:
        """Sign the head after a write, unless the checkpoints were removed
        (:meth:`unsigned_reason`): signing would cover the cut or re-chained journal
        behind them, which ``store verify`` names instead (None is returned and nothing is
        signed)."""
        if self.unsigned_reason() is not None:
            return None
        return self.checkpoint(marker)

    def unsigned_reason(self) -> str | None:
        """Why the store's head must not be signed, else None: no checkpoint at all over a
        journal that holds a file event. Every write of a file signs after its commit (and
        a store signs its creation), so the checkpoints were removed, perhaps with the
        journal cut back to its first write, which signing would vouch for (``serve``
        refuses to start). A journal of account events only and no checkpoint is a store
        made before stores signed their creation (b59cfcd: ``roads users add`` then
        ``roads serve``), adopted by its first signed write; cutting a newer store back to
        its accounts is within what a writer of the whole store can hide
        (docs/compliance.md)."""
        if checkpoint.newest(self.root / checkpoint.DIRECTORY / checkpoint.FILE) is not None:
            return None
        files = self.journal.count_after(FILE_KINDS, 0)
        if files == 0:
            return None
        return (f"the journal holds {files:,} file event{'s' if files != 1 else ''} but no "
                "signed checkpoint: the checkpoints were removed (or the last one does not "
                "read), and the journal may have been cut back behind them; "
                "`roads store verify` names them")

    def sign_interrupted(self) -> Checkpoint | None:
        """Sign the head when file events follow the newest checkpoint: a write killed
        between its commit and its checkpoint (as :meth:`sign_head`, never over removed
        checkpoints)."""
        newest = checkpoint.newest(self.root / checkpoint.DIRECTORY / checkpoint.FILE)
        if self.journal.count_after(FILE_KINDS, 0 if newest is None else newest.seq) == 0:
            return None
        return self.sign_head()

    def parts_by_day(self, coups: pl.DataFrame, shoes: pl.DataFrame | None, kind: str,
                     ids: Sequence[str], metadata: dict[str, Any],
                     starts: np.ndarray | None = None) -> list[Part]:
        """Canonical rows split into one part per day and table; names from ``ids``.

        A shoe is filed under the day its first coup was dealt (a shoe past midnight stays
        in one file); shoe rows take the day of their coups, or their own start.
        ``starts``: the coups' shoe runs when the caller knows each shoe to be one run.

        The parts come digested: a shoe's digest (and a shoe row's line) does not depend on
        what else its file holds, so all the rows are digested in one pass (an ingest's
        bucket of ten days: a third of the time of a pass per day's part, in the part
        writers)."""
        coups = conform(coups, "coups")
        row_days, shoe_days = _shoe_days(coups, starts)
        meta = {k: str(v) for k, v in metadata.items() if v is not None}
        out = []
        for table, frame in (("coups", coups),
                             ("shoes", conform(shoes, "shoes") if shoes is not None else None)):
            if frame is None or frame.is_empty():
                continue
            if table == "coups":
                dated = frame.with_columns(row_days)
                contents = _contents_by_day(frame, shoe_days)
            else:
                dated = frame.join(shoe_days, on=list(SHOE_KEY), how="left",
                                   maintain_order="left").with_columns(
                    pl.coalesce("day", pl.col("started_at").dt.date()).alias("day"))
                contents = _shoe_contents_by_day(frame, dated["day"])
            for (d,), rows in dated.partition_by("day", maintain_order=True, include_key=False,
                                                 as_dict=True).items():
                label = d.isoformat() if isinstance(d, date) else UNDATED
                out.append(Part(table, label, part_name(kind, *ids, label), rows, meta,
                                contents[d]))
        return out

    # -- sealing live shoes -----------------------------------------------------------------
    def seal(self, table_id: str, shoe_id: str, actor: str | None = None,
             run: Run | None = None) -> Event:
        """Seal a closed shoe (:meth:`_seal`) as a writer (:meth:`writing`)."""
        with self.writing():
            return self._seal(table_id, shoe_id, actor, run)

    def _seal(self, table_id: str, shoe_id: str, actor: str | None = None,
              run: Run | None = None) -> Event:
        """Write a closed shoe's coups and shoe row to Parquet and journal them.

        The part name derives from the table and shoe, so sealing again after a crash
        before the journal entry replaces what the killed seal published; a shoe already
        sealed is left as it is (its seal event is returned). That holds when another
        writer (a recovery, a second service on the store) seals the shoe between this
        seal's look at the journal and its commit, too: the look is taken again inside the
        transaction that would journal the seal, which then journals nothing and returns
        the other's event. The files wait under hidden names of this seal's own, fsynced
        side by side, and are renamed into place inside that transaction only when it
        journals them (:meth:`commit`): the seal that lost never touches the published
        files and discards its own; ``run``: see :meth:`commit`."""
        events = self.journal.events(table_id, shoe_id)
        sealed = next((e for e in events if e.kind == "shoe_sealed"), None)
        if sealed is not None:
            return sealed
        opened = next((e for e in events if e.kind == "shoe_opened"), None)
        if opened is None or not any(e.kind == "shoe_closed" for e in events):
            raise StoreError(f"shoe {shoe_id} at table {table_id} is not closed")
        rows, record = shoe_records(events)
        coups, shoe = arrow_part(rows, "coups"), arrow_part([record], "shoes")
        contents = None if coups is None or shoe is None else sealed_content(rows, record)
        if contents is None:  # no coups, or values not canonical: polars converts them (or
            # names what is wrong) and the vectorised digests digest them
            coups, shoe = coups_frame(rows), shoe_frame(record)
        day = datetime.fromisoformat(opened.at).astimezone(UTC).date().isoformat()
        name = part_name("live", table_id, shoe_id)
        source = str(opened.payload.get("source", "live"))
        try:
            written = self.write_parts(
                [Part("coups", day, name, coups, {"rules": opened.payload["rules"]}),
                 Part("shoes", day, name, shoe, {"rules": opened.payload["rules"]})],
                source, durable=False, contents=contents, hidden=True)
            faults.point("seal:files-written")
            written = _synced(self.root, written)
        except FileNotFoundError:  # a recovery sealed it meanwhile and took our temporaries
            sealed = next((e for e in self.journal.events(table_id, shoe_id)
                           if e.kind == "shoe_sealed"), None)
            if sealed is None:
                raise
            return sealed
        # outside the try: a file missing later (the signing key) is an error, not a seal
        return self.commit("shoe_sealed", written, {"coups": len(coups)}, actor, table_id,
                           shoe_id, run=run,
                           unless=lambda tx: tx.last(table_id, ("shoe_sealed",), shoe_id))

    def unsealed_closed(self) -> list[tuple[str, str]]:
        """Closed shoes whose seal did not complete (e.g. after a crash)."""
        db = self.journal.connection()
        rows = db.execute(
            "SELECT DISTINCT table_id, shoe_id FROM events e WHERE kind = 'shoe_closed' "
            "AND NOT EXISTS (SELECT 1 FROM events s WHERE s.kind = 'shoe_sealed' "
            "AND s.table_id = e.table_id AND s.shoe_id = e.shoe_id) ORDER BY seq").fetchall()
        return [(r[0], r[1]) for r in rows]

    def seal_pending(self, run: Run | None = None) -> list[tuple[str, str]]:
        """Seal every closed shoe whose seal did not complete, and remove what a seal
        killed mid-write left of its files (:meth:`sweep_stored`; a seal of that shoe
        still writing finds its own gone, and returns this seal's event)."""
        pending = self.unsealed_closed()
        self.sign_interrupted()
        for table_id, shoe_id in pending:
            self.seal(table_id, shoe_id, "system", run)
            faults.point("seal:recovered")
        self.sweep_stored()
        return pending

    def sweep_stored(self, listing: Listing | None = None) -> list[str]:
        """Hidden temporaries of stored files (any writer's, in flight or killed, of a
        name the catalogue lists: a seal that lost, or was killed before a recovery sealed
        the shoe), removed; the removed paths. Safe beside any writer: a file the catalogue
        lists is never written again. A stored file missing while a temporary of its name
        holds its journaled bytes (a power cut lost the seal's rename) is put in place."""
        listing = listing or walk(self.root)
        stored = {e.path: e for e in catalog.files(self.journal.connection())}
        gone = []
        for rel in listing.temporaries:
            target = temporary_target(rel)
            entry = None if target is None else stored.get(target)
            if target is None or entry is None:
                continue
            if not (self.root / target).exists() and sha256(self.root / rel) == entry.sha256:
                os.replace(self.root / rel, self.root / target)
                fsync_dir((self.root / target).parent)
                continue
            (self.root / rel).unlink(missing_ok=True)
            gone.append(rel)
        return gone

    # -- maintenance ------------------------------------------------------------------------
    def sweep(self, kinds: Sequence[str]) -> list[str]:
        """Remove leftovers of interrupted bulk writes (call under :meth:`bulk_lock`): part
        files of ``kinds`` that no committed event names, files a committed compaction or
        purge removed but a crash left behind, hidden temporaries of those kinds and of
        stored files (:meth:`sweep_stored`) and of the store's own files (``store.json``,
        the keys), and the partition directories a purge or this sweep left empty; and
        sign the head a write killed before its checkpoint left unsigned."""
        db = self.journal.connection()
        listed = {r[0] for r in db.execute("SELECT path FROM catalog").fetchall()}
        cleared = self.journal.of_kinds(("store_compacted", "data_purged"))
        removed_before = catalog.removed_paths(cleared)
        listing = walk(self.root)
        gone = []
        for rel in listing.parts:
            name = rel.rsplit("/", 1)[-1]
            ours = any(name.startswith(f"part-{k}-") for k in kinds)
            if rel not in listed and (ours or rel in removed_before):
                (self.root / rel).unlink(missing_ok=True)
                gone.append(rel)
        for rel in listing.temporaries:
            name, top = rel.rsplit("/", 1)[-1], rel.split("/", 1)[0]
            if any(f"-part-{k}-" in name for k in kinds) or "/" not in rel or top == "keys" \
                    or ("import" in kinds and top in ATTACHMENTS):
                (self.root / rel).unlink(missing_ok=True)
                gone.append(rel)
        removed = set(gone)
        left = [rel for rel in listing.temporaries if rel not in removed]
        gone += self.sweep_stored(replace(listing, temporaries=left))  # each once
        purged = {p for e in cleared if e.kind == "data_purged"
                  for p in e.payload.get("partitions", ())}
        _remove_empty(self.root, purged | {rel.rsplit("/", 1)[0] for rel in gone})
        self.sign_interrupted()
        return gone

    def compact(self, before: date | None = None, actor: str = "system") -> dict[str, int]:
        """Merge each closed day's part files (days before ``before``, default today UTC).

        Each old file is checked against its journaled SHA-256 first (a compaction never
        launders an altered file); the merged file and the removal of the old ones are one
        journal event, and the old files are deleted only after it commits."""
        before = before or datetime.now(UTC).date()
        merged = replaced = 0
        with self.bulk_lock():
            self.sweep(("compact",))
            db = self.journal.connection()
            for table in ("coups", "shoes"):
                by_day: dict[str, list[FileEntry]] = {}
                for entry in catalog.files(db, table):
                    if entry.day != UNDATED and date.fromisoformat(entry.day) < before:
                        by_day.setdefault(entry.day, []).append(entry)
                for day, entries in sorted(by_day.items()):
                    if len(entries) < 2:
                        continue
                    self._merge(table, day, entries, actor)
                    merged += 1
                    replaced += len(entries)
        return {"partitions_compacted": merged, "files_replaced": replaced}

    def _merge(self, table: str, day: str, entries: list[FileEntry], actor: str) -> None:
        for entry in entries:
            found = sha256(self.root / entry.path)
            if found != entry.sha256:
                raise StoreError(f"{entry.path} does not match its journaled SHA-256; "
                                 "not compacting it (see `roads store verify`)")
        frame = pl.concat([conform(pl.read_parquet(self.root / e.path, glob=False), table)
                           for e in entries])
        keys = ["table_id", "shoe_id", *(["coup"] if table == "coups" else [])]
        sources = sorted({e.source for e in entries})
        part = Part(table, day, part_name("compact", table, day, uuid.uuid4().hex[:12]),
                    frame.sort(keys), {"compacted_from": str(len(entries))})
        written = self.write_parts([part], sources[0] if len(sources) == 1 else "mixed")
        faults.point("compact:merged-written")
        kept = max(e.kept_since for e in entries)
        self.commit("store_compacted", written, {"day": day, "table": table}, actor,
                    removed=[e.path for e in entries], kept_since=kept)
        faults.point("compact:committed")
        for entry in entries:  # (a kill among these: the next compaction's sweep ends it)
            (self.root / entry.path).unlink(missing_ok=True)
            faults.point("compact:old-removed")

    def purge(self, before: date, keep_since: datetime, actor: str,
              profile: str) -> list[str]:
        """Delete the day partitions older than ``before``; refuse when any file there
        holds data the journal received after ``keep_since`` (inside the retention period,
        whatever its coups' own dates say). A purge killed after its event leaves files
        the journal removed: the next purge (or compaction, or ingest) deletes them first."""
        with self.bulk_lock():
            self.sweep(())
            db = self.journal.connection()
            doomed = [e for e in catalog.files(db)
                      if e.day != UNDATED and date.fromisoformat(e.day) < before]
            young = [e for e in doomed
                     if datetime.fromisoformat(e.kept_since).astimezone(UTC) > keep_since]
            if young:
                raise InputError(
                    f"refused: {young[0].path} holds data journaled on "
                    f"{young[0].kept_since[:10]}, inside the {profile} retention period "
                    f"(data journaled after {keep_since.date().isoformat()} must be kept)")
            if not doomed:
                return []
            partitions = sorted({e.path.rsplit("/", 1)[0] for e in doomed})
            self.commit("data_purged", [], {"before": before.isoformat(), "profile": profile,
                                            "partitions": partitions}, actor,
                        removed=[e.path for e in doomed])
            faults.point("purge:committed")
            for entry in doomed:
                (self.root / entry.path).unlink(missing_ok=True)
                faults.point("purge:file-removed")
            _remove_empty(self.root, partitions)
            return partitions

    # -- information ------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """Files, rows and bytes per table from the catalogue; the journal's head and chain;
        the cheap checks (every catalogued file present at its size, nothing else stored,
        no temporaries left, the checkpoints hold)."""
        from roads.store.verify import cheap_problems

        db = self.journal.connection()
        result: dict[str, Any] = {"root": str(self.root), "purpose": self.purpose}
        for table in ("coups", "shoes"):
            entries = catalog.files(db, table)
            result[table] = {"partitions": len({e.day for e in entries}),
                             "files": len(entries), "rows": sum(e.rows for e in entries),
                             "bytes": sum(e.bytes for e in entries)}
        seq, head = self.journal.head()
        chain = self.journal.verify()
        result["journal"] = {"events": seq, "head": head, "chain_ok": chain.ok,
                             "problem": chain.reason}
        result["problems"] = cheap_problems(self)
        return result


def _synced(root: Path, written: Sequence[Written]) -> list[Written]:
    """Files written unsynced, made durable with their directories on the part writers'
    threads (a seal's two files and two directories side by side, with no threads started
    for them)."""
    paths = [root / w.on_disk for w in written]
    list(_writers().map(fsync_dir, [*paths, *sorted({p.parent for p in paths})]))  # (any path)
    return [dataclasses.replace(w, durable=True) for w in written]


def _remove_empty(root: Path, partitions: Iterable[str]) -> None:
    """Remove the partition directories (relative paths) a purge left empty."""
    for rel in sorted(partitions):
        directory = root / rel
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()


def _held(path: Path) -> bool:
    """Whether a process holds a lock of ``path`` (a missing file: none ever did; one this
    user may not open, mode 0600 for another user: taken as held, so verify waits for what
    it found beside it and names what stays, never a traceback)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except PermissionError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # (releases the lock it took)
    return False


def _publish(root: Path, written: Written) -> None:
    """A hidden file renamed to its name (inside the commit that journals it; a shared
    commit that runs its actions again finds it there already)."""
    hidden, target = root / str(written.hidden), root / written.entry.path
    try:
        os.replace(hidden, target)
    except FileNotFoundError:
        if not target.exists():
            raise


def _created(path: Path) -> io.BufferedWriter:
    """``path`` opened to write, its folder made again if a sweep removed it as empty
    between our ``mkdir`` and this open (a purge's sweep beside a sealing server)."""
    try:
        return open(path, "wb")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "wb")


def _write(path: Path, frame: pl.DataFrame | pa.Table, meta: dict[str, str],
           durable: bool = True, publish: bool = True) -> tuple[str, int, Path]:
    """One part file, published atomically; returns its SHA-256, size and where it is.
    polars' writer encodes the columns in parallel (half the time of a pyarrow writer for a
    bulk part) and keeps the Enum types; a seal's Arrow table, already typed as the file
    holds them (polars' own schema, :func:`~roads.store.journaled.file_schema`), is encoded
    by Arrow's writer with no frame built (no column statistics: none is read). The bytes
    are hashed in memory before they are written, so the file is never read back.
    ``durable=False``: no fsync (see :func:`write_part`); ``publish=False``: left under its
    hidden temporary name."""
    buffer = io.BytesIO()
    if isinstance(frame, pa.Table):
        pq.write_table(frame.replace_schema_metadata(meta), buffer, compression=COMPRESSION,
                       compression_level=COMPRESSION_LEVEL, write_statistics=False)
    else:
        frame.write_parquet(buffer, compression=COMPRESSION,
                            compression_level=COMPRESSION_LEVEL, statistics=STATISTICS,
                            metadata=meta)
    data = buffer.getbuffer()
    sha = hashlib.sha256(data).hexdigest()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        with _created(tmp) as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        faults.point("store:temporary-written")
        if not publish:
            return sha, len(data), tmp
        os.replace(tmp, path)
        if durable:
            fsync_dir(path.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return sha, len(data), path


def _contents_by_day(coups: pl.DataFrame, shoe_days: pl.DataFrame) -> dict[Any, Content]:
    """The :class:`Content` of each day's coups part (by the day :func:`_shoe_days` gives
    each shoe), from one digest pass over all of ``coups``."""
    per_shoe = shoe_digests(coups).join(shoe_days, on=list(SHOE_KEY), how="left",
                                        maintain_order="left", nulls_equal=True)
    return {d: _coups_content(shoes)
            for (d,), shoes in per_shoe.partition_by("day", maintain_order=True,
                                                     include_key=False, as_dict=True).items()}


def _shoe_contents_by_day(shoes: pl.DataFrame, days: pl.Series) -> dict[Any, Content]:
    """The :class:`Content` of each day's shoes part (canonical ``shoes``; ``days``: each
    row's day), from one pass over all the rows: each day's lines in (table_id, shoe_id)
    order, and its index rows in the rows' order."""
    lines = shoes.select(*SHOE_KEY).with_columns(days.alias("day"),
                                                 shoe_lines(shoes).alias("line"))
    by_day = lines.sort("day", "table_id", "shoe_id", maintain_order=True).partition_by(
        "day", maintain_order=True, include_key=False, as_dict=True)
    index = shoe_index_frame(shoes).with_columns(days.alias("day")).partition_by(
        "day", maintain_order=True, include_key=False, as_dict=True)
    return {d: Content(lines_digest(rows["line"]), pl.DataFrame(schema=KEYS),
                       _compact(index[(d,)])) for (d,), rows in by_day.items()}


def _shoe_days(coups: pl.DataFrame, starts: np.ndarray | None = None
               ) -> tuple[pl.Series, pl.DataFrame]:
    """Each row's shoe's first day, and each shoe's (table_id, shoe_id, day).

    Rows usually come shoe by shoe: then each run of rows is one shoe and its earliest time
    is a reduction over the run (no hashing). ``starts``: the runs, if the caller knows."""
    keys = list(SHOE_KEY)
    if starts is None:
        starts = shoe_runs(coups) if coups.height else None
    times = coups["dealt_at"]
    if starts is None or times.null_count():
        day = pl.col("dealt_at").min().dt.date().alias("day")
        return (coups.select(day.over(keys)).to_series(),
                coups.group_by(keys).agg(day))
    first = np.flatnonzero(starts)
    shoes = coups.select(keys)[first]
    earliest = pl.Series("day", np.minimum.reduceat(times.dt.epoch("us").to_numpy(), first))
    earliest = earliest.cast(pl.Datetime("us", "UTC")).dt.date()
    runs = np.diff(np.r_[first, len(starts)])
    return (pl.Series("day", np.repeat(earliest.to_numpy(), runs), dtype=pl.Date),
            shoes.with_columns(earliest))
