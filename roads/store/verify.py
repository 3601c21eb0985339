"""``roads store verify``: every stored byte accounted for by the journal.

Checks, each reported by kind with the first (and every) place it occurs:

- ``chain``: the journal's hash chain (an event altered, removed or relinked);
- ``event``: a void or amendment no entry point writes (no coup number, no new values),
  which every reader refuses to apply;
- ``checkpoint``: the signed checkpoints (the journal's tail cut, or events re-chained
  before the newest checkpoint);
- ``altered`` / ``missing`` ``store.json``: not the file whose digest the newest checkpoint
  signed;
- ``catalogue``: the catalogue beside the journal agrees with a replay of the file events;
- ``missing`` / ``altered``: every catalogued file is there, at its size and SHA-256;
- ``not accounted for``: every file under the store (one walk) that no committed event
  names and that is none of the store's own (part files, or ones a committed compaction or
  purge removed; an ingest run's files no committed run names; anything else), and
  leftover temporaries, as left by an interrupted write;
- ``held twice``: a coup stored in two places, or a shoe row stored twice, or an imported
  shoe that is also a live shoe of the journal;
- ``differs from journal``: a sealed shoe whose journaled file content is not what its
  ``coup_entered`` events say;
- ``accounts``: a user, API key or personal token in ``auth.sqlite`` whose role, table,
  expiry or revoked / disabled flag is not what the journal's account events made it, or
  that no event made (:mod:`roads.store.accounts`);
- ``unreadable`` (with ``deep``): a file that does not decode, or whose rows no longer give
  the content digest it was journaled with.

The default run hashes every file and reads only the key columns of the coups files; ``deep``
decodes every row again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from roads.errors import InputError
from roads.files import sha256
from roads.schema import COUPS, conform
from roads.store import accounts, catalog, checkpoint
from roads.store.catalog import KEYS, FileEntry
from roads.store.corrections import CORRECTION_KINDS, correction_problem
from roads.store.digest import combine_leaves, coups_digest, leaf, shoe_digests, table_digest
from roads.store.early import EarlyReads, column_arrays
from roads.store.journal import FILE_KINDS, Event
from roads.store.key_runs import KeyPairs, file_keys, key_pairs
from roads.store.layout import walk
from roads.store.store import shoe_index_frame

if TYPE_CHECKING:
    from roads.store.store import Store

KINDS = ("chain", "event", "checkpoint", "catalogue", "missing", "altered", "not accounted for",
         "in flight", "held twice", "differs from journal", "accounts", "unreadable")


@dataclass
class Report:
    problems: list[dict[str, str]] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    coups: int = 0
    events: int = 0
    sealed_shoes: int = 0
    #: Files found beside a running writer and still unaccounted for when verify stopped
    #: waiting for it (each is also a problem: "in flight", see :func:`_unaccounted`).
    in_flight: list[str] = field(default_factory=list)

    def add(self, kind: str, where: str, detail: str) -> None:
        self.problems.append({"kind": kind, "where": where, "detail": detail})

    @property
    def ok(self) -> bool:
        return not self.problems

    def first_of_each_kind(self) -> list[dict[str, str]]:
        seen: dict[str, dict[str, str]] = {}
        for p in self.problems:
            seen.setdefault(p["kind"], p)
        return [seen[k] for k in KINDS if k in seen]

    def to_json(self) -> dict[str, Any]:
        counts = Counter(p["kind"] for p in self.problems)
        return {"ok": self.ok, "files": self.files, "bytes": self.bytes, "coups": self.coups,
                "events": self.events, "sealed_shoes": self.sealed_shoes,
                "in_flight": self.in_flight,
                "problems_by_kind": dict(counts), "first_of_each_kind": self.first_of_each_kind(),
                "problems": self.problems}


def _checkpoints(store: Store, report: Report, file_events: list[Event] | None = None,
                 anchor: Path | None = None) -> None:
    """The store's checkpoints against its journal; with ``file_events`` (the journal's):
    also that none follows the newest checkpoint (a removed checkpoint file, or a write
    killed before it signed: the next write signs it); ``anchor``: a copy of checkpoints
    kept off the machine, each of which the journal must still hold."""
    public = store.root / checkpoint.PUBLIC
    try:
        points = checkpoint.read(store.root / checkpoint.DIRECTORY / checkpoint.FILE)
    except ValueError as exc:
        report.add("checkpoint", checkpoint.FILE, str(exc))
        return
    _marker(store, points, report)
    if file_events is not None:
        _unsigned(points, file_events, report)
    if not points and (file_events is None or not file_events):
        reason = store.unsigned_reason()  # (file events uncovered are named just above)
        if reason is not None:
            report.add("checkpoint", checkpoint.FILE, f"there is no checkpoint at all: {reason}")
    if anchor is not None:
        _anchored(store, anchor, report)
    if not public.exists():
        if points:
            report.add("checkpoint", checkpoint.PUBLIC, "the store's public key is missing")
        return
    problem = _held_by_journal(store, points, public)
    if problem:
        report.add("checkpoint", checkpoint.FILE, problem)


def _marker(store: Store, points: list[checkpoint.Checkpoint], report: Report) -> None:
    """``store.json`` against the digest the newest checkpoint signed for it (a store whose
    checkpoints carry none, from before, is not judged until its next checkpoint)."""
    signed = next((p.store for p in reversed(points) if p.store), None)
    if signed is None:
        return
    found = checkpoint.marker_digest(store.root)
    if found is None:
        report.add("missing", checkpoint.MARKER, "the newest checkpoint signed this file but "
                   "it is not there (a write of it killed: the next writing command writes it)")
    elif found != signed:
        report.add("altered", checkpoint.MARKER, "its content is not what the newest "
                   "checkpoint signed: it was edited (or a rewrite of it was killed before "
                   "the rename: the next writing command writes it again)")


def _held_by_journal(store: Store, points: list[checkpoint.Checkpoint], public: Path
                     ) -> str | None:
    """The first checkpoint the journal no longer holds (signed by the store's key)."""

    def head_of(seq: int) -> str | None:
        event = store.journal.at(seq)
        return None if event is None else event.hash

    return checkpoint.check(points, public.read_bytes(), head_of, store.journal.head()[0])


def _unsigned(points: list[checkpoint.Checkpoint], file_events: list[Event],
              report: Report) -> None:
    newest = points[-1].seq if points else 0
    unsigned = [e for e in file_events if e.seq > newest]
    if not unsigned:
        return
    first = unsigned[0]
    why = ("there is no checkpoint at all: the checkpoints were removed" if not points else
           "a write killed before it signed (the store's next write signs it), or the "
           "newest checkpoints were removed")
    report.add("checkpoint", f"event {first.seq}",
               f"{len(unsigned):,} file event(s) from this {first.kind} on are covered by no "
               f"signed checkpoint: {why}")


def _anchored(store: Store, anchor: Path, report: Report) -> None:
    """Checkpoints kept elsewhere (a bundle's, a WORM copy): the journal must still hold
    every head they signed, under the store's key."""
    where = f"anchor {anchor.name}"
    try:
        points = checkpoint.read(anchor)
    except (OSError, UnicodeDecodeError) as exc:
        report.add("checkpoint", where, f"cannot read it: {exc}")
        return
    except ValueError as exc:
        report.add("checkpoint", where, str(exc))
        return
    if not points:
        report.add("checkpoint", where, "holds no checkpoint")
        return
    public = store.root / checkpoint.PUBLIC
    if not public.exists():
        report.add("checkpoint", where, "the store's public key is missing")
        return
    problem = _held_by_journal(store, points, public)
    if problem:
        report.add("checkpoint", where, problem + (
            " (the store's key was replaced, and its checkpoints re-signed)"
            if "another key" in problem else ""))


def _present(store: Store, entries: list[FileEntry], report: Report,
             hashes: dict[str, str] | None) -> list[FileEntry]:
    """Missing and altered files (by size; by SHA-256 when ``hashes`` holds them)."""
    intact = []
    for e in entries:
        path = store.root / e.path
        if not path.is_file():
            report.add("missing", e.path, "the journal lists this file but it is not there")
            continue
        size = path.stat().st_size
        if size != e.bytes:
            report.add("altered", e.path, f"{size:,} bytes; the journal says {e.bytes:,}")
            continue
        if hashes is not None and hashes.get(e.path) != e.sha256:
            report.add("altered", e.path, "its SHA-256 is not the one journaled")
            continue
        intact.append(e)
    return intact


def _attachments(store: Store, report: Report) -> set[str]:
    """Each import's report, quarantine and flags against the SHA-256 its
    ``import_committed`` event journaled for them (they are no part files, so the file
    checks above do not see them; a changed byte in a rejected row is a changed record).
    Returns their paths."""
    paths = set()
    for event in store.journal.of_kinds(("import_committed",)):
        for item in event.payload.get("attachments", {}).values():
            paths.add(item["path"])
            path = store.root / item["path"]
            if not path.is_file():
                report.add("missing", item["path"], "the journal lists this import's file "
                                                    "but it is not there")
            elif sha256(path) != item["sha256"]:
                report.add("altered", item["path"], "its SHA-256 is not the one journaled")
    return paths


def _attachment_paths(store: Store) -> set[str]:
    """The paths of every committed import's report, quarantine and flags."""
    return {item["path"] for event in store.journal.of_kinds(("import_committed",))
            for item in event.payload.get("attachments", {}).values()}


#: How long verify waits, at most, for files found while a writer held its lock to be
#: published or gone (a seal takes milliseconds; a bulk run's parts wait for its commit).
SETTLE_SECONDS = 10.0
#: How often it looks again meanwhile.
_SETTLE_POLL = 0.05


def _unaccounted(store: Store, entries: list[FileEntry], report: Report,
                 removed: set[str], attachments: set[str]) -> None:
    """Every file under the store (one walk) that is neither a file the journal names nor
    one of the store's own (:data:`~roads.store.layout.FIXED`).

    A file found while a writer held its lock may be that writer's, in flight: it is looked
    at again until it is published (named by the journal), gone, or its writers have ended
    (then it was not theirs), for :data:`SETTLE_SECONDS` at most. One still there then is a
    problem all the same ("in flight": it could not be checked), so holding a lock (any
    reader of the store can) never makes a planted file pass."""
    listed = {e.path for e in entries}
    before = store.writer_running()
    found = walk(store.root)
    writing = before or store.writer_running()
    if set(found.parts) - listed:  # committed since the catalogue was read?
        listed |= {e.path for e in catalog.files(store.journal.connection())}
    waiting: dict[str, str] = {}  # path -> what it is, if it stays
    for rel in found.parts:
        if rel in removed and rel not in listed:
            report.add("not accounted for", rel, "a file a committed compaction or purge "
                       "removed, left by an interrupted deletion (the next compaction or "
                       "purge deletes it)")
        elif rel not in listed:
            waiting[rel] = "no committed journal event names this file"
    for rel in found.attachments:
        if rel not in attachments:
            waiting[rel] = ("no committed ingest run names this file (a killed run's, which "
                            "the next ingest removes, or put there)")
    for rel in found.temporaries:
        if writing or (store.root / rel).exists():  # (one gone since: a write that ended)
            waiting[rel] = "a temporary file left by an interrupted write"
    if not writing:
        for rel, detail in waiting.items():
            report.add("not accounted for", rel, detail)
    elif waiting:  # (a bulk run's parts and reports wait for its commit under their names;
        _settled(store, waiting, report, SETTLE_SECONDS)  # a seal's, for the commit's sync)
    for rel in found.other:
        report.add("not accounted for", rel, "not a file the store writes: no journal "
                   "event names it and it is none of the store's own files")


def _settled(store: Store, waiting: dict[str, str], report: Report, settle: float) -> None:
    """Files found beside a running writer (path → what it is if it stays): each is looked
    at again until published, gone or its writers ended, for ``settle`` seconds at most;
    what is left is reported (see :func:`_unaccounted`)."""
    deadline = time.monotonic() + settle
    while True:
        published = {e.path for e in catalog.files(store.journal.connection())} \
            | _attachment_paths(store)
        waiting = {rel: detail for rel, detail in waiting.items()
                   if rel not in published and (store.root / rel).exists()}
        if not waiting:
            return
        if not store.writer_running():  # its writers ended and it is still there
            for rel, detail in waiting.items():
                report.add("not accounted for", rel, detail)
            return
        if time.monotonic() >= deadline:
            report.in_flight += sorted(waiting)
            for rel in sorted(waiting):
                report.add("in flight", rel, f"found beside a running writer and still "
                           f"named by no journal event {settle:g} s later: it could not be "
                           "checked (verify again when the write has ended)")
            return
        time.sleep(_SETTLE_POLL)


def cheap_problems(store: Store) -> list[dict[str, str]]:
    """What ``roads store info`` checks without reading file contents."""
    report = Report()
    entries = catalog.files(store.journal.connection())
    _present(store, entries, report, None)
    _unaccounted(store, entries, report,
                 catalog.removed_paths(store.journal.of_kinds(("store_compacted", "data_purged"))),
                 _attachment_paths(store))
    _checkpoints(store, report)
    for where, detail in accounts.disagreements(
            store.root, lambda: store.journal.of_kinds(accounts.KINDS)):
        report.add("accounts", where, detail)
    return report.problems


def verify(store: Store, deep: bool = False,
           progress: Callable[[int], object] | None = None,
           anchor: Path | None = None, early: EarlyReads | None = None) -> Report:
    """Re-read every file and the journal; every problem found (see the module doc).

    The work that waits on the disk or runs in C goes to other threads from the start,
    beside the journal's checks in Python: every file's SHA-256 and what it holds (from the
    catalogue's list, before the journal's own list is replayed), the catalogue's shoe
    tables, and the sealed shoes against their journal events. ``early``: the hashes and
    shoe tables a command started before it imported this module (used where they read;
    anything else is read here). Problems are reported in the same order whatever finishes
    first."""
    report = Report()
    journal = store.journal
    db = journal.connection()
    # the catalogue and the journal's head from one snapshot, and the file events cut at
    # that head: beside a live server, seals committed between two reads made the
    # catalogue and the events disagree about files verify had simply not seen yet
    db.execute("BEGIN")
    try:
        listed_files = catalog.files(db)
        head = journal.head()[0]
    finally:
        db.execute("COMMIT")
    early_hashes = early.hashes if early is not None else {}
    # (the shoe tables read ahead only when no write came between: a live server's)
    early_tables = early.shoe_tables if early is not None and early.head == head else {}
    early_keys = early.keys if early is not None else {}

    def digest(entry: FileEntry) -> str | None:
        path = store.root / entry.path
        ahead = early_hashes.get(entry.path)
        found = None
        if ahead is not None and ahead.exception() is None:
            found = ahead.result()
        elif path.is_file():
            found = sha256(path)
        if progress is not None:
            progress(entry.rows if entry.table == "coups" else 0)
        return found

    with ThreadPoolExecutor(max_workers=4) as pool:
        hashing = {e.path: pool.submit(digest, e) for e in listed_files}
        shoe_tables = [pool.submit(_catalogue_shoe_tables, store, t, early_tables.get(t))
                       for t in ("catalog_shoes", "shoe_index")]
        sealed = pool.submit(_sealed_against_journal, store)
        # what each file holds, read ahead (only intact files' reads are used)
        contents = {e.path: pool.submit(_attempt, partial(_keys, ahead=early_keys.get(e.path))
                                        if e.table == "coups" else _shoes_rows, store, e)
                    for e in listed_files if e.table in ("coups", "shoes")}
        chain = journal.verify()
        report.events = chain.events
        if not chain.ok:
            report.add("chain", f"event {chain.first_bad_seq}", chain.reason or "chain broken")
        for fix in journal.of_kinds(CORRECTION_KINDS):
            problem = correction_problem(fix)
            if problem is not None:
                report.add("event", f"event {fix.seq}", f"a {fix.kind} no entry point "
                                                        f"writes: {problem}")
        every_file_event = journal.of_kinds(FILE_KINDS)
        file_events = [e for e in every_file_event if e.seq <= head]
        # files published after the head (their shoes may be in the shoe tables read later)
        newer = set(catalog.replay([e for e in every_file_event if e.seq > head]))
        _checkpoints(store, report, file_events, anchor)
        attachments = _attachments(store, report)
        for where, detail in accounts.disagreements(
                store.root, lambda: journal.of_kinds(accounts.KINDS)):
            report.add("accounts", where, detail)
        replayed = catalog.replay(file_events)
        derived = {e.path: e for e in listed_files}
        for path in sorted(set(replayed) | set(derived)):
            a, b = replayed.get(path), derived.get(path)
            if a is None or b is None or a.sha256 != b.sha256 or a.rows != b.rows:
                report.add("catalogue", path, "the catalogue and the journal's file events "
                                              "disagree about this file")
        entries = [replayed[p] for p in sorted(replayed)]
        report.files = len(entries)
        report.bytes = sum(e.bytes for e in entries)
        report.coups = sum(e.rows for e in entries if e.table == "coups")
        for e in entries:  # files the journal names but the catalogue does not list
            if e.path not in hashing:
                hashing[e.path] = pool.submit(digest, e)
        hashes = {p: h for p, f in hashing.items() if (h := f.result()) is not None}
        intact = _present(store, entries, report, hashes)
        _unaccounted(store, entries, report, catalog.removed_paths(file_events), attachments)
        listed_shoes, indexed = (t.result().filter(~pl.col("path").is_in(list(newer)))
                                 for t in shoe_tables)
        _held_twice(store, entries, intact, report, pool, (listed_shoes, indexed), contents)
        against_journal = sealed.result()
    report.sealed_shoes = against_journal.sealed_shoes
    report.problems += against_journal.problems
    if deep:
        _decode(store, intact, report)
    return report


def _keys(store: Store, entry: FileEntry,
          ahead: Future[list[KeyPairs | pa.Table]] | None = None) -> pl.DataFrame:
    """The distinct (table_id, shoe_id) of a coups file, read as Parquet dictionaries, row
    group by row group (no dataset layer: nothing else of the file is touched), or as
    ``ahead`` read them."""
    groups = ahead.result() if ahead is not None and ahead.exception() is None else \
        file_keys(store.root / entry.path)
    found = [_key_frame(g) for g in groups]
    keys = pl.concat(found) if found else pl.DataFrame(schema=KEYS)
    return keys.with_columns(pl.col("table_id", "shoe_id").cast(pl.String)).unique() \
        .with_columns(pl.lit(entry.path).alias("path"))


def _key_frame(group: KeyPairs | pa.Table) -> pl.DataFrame:
    """A row group's distinct keys as strings: only the distinct pairs of dictionary
    indices become strings (a null key, or keys not dictionary-encoded, through polars)."""
    if isinstance(group, pa.Table):
        return pl.DataFrame(pl.from_arrow(group)).unique()
    names = [pl.Series(_CData(d)).cast(pl.String) for d in (group.tables, group.shoes)]
    return pl.DataFrame({"table_id": names[0].gather(group.pairs // group.width),
                         "shoe_id": names[1].gather(group.pairs % group.width)})


class _CData:
    """An Arrow array seen through the Arrow C data interface only: polars takes it as it
    is, where ``pl.from_arrow`` first imports ``pyarrow.compute`` (30-50 ms of CPU in a
    fresh verify, holding the GIL) to coerce chunked arrays these never are."""

    __slots__ = ("array",)

    def __init__(self, array: pa.Array) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema: object | None = None
                          ) -> tuple[object, object]:
        schema, array = self.array.__arrow_c_array__(requested_schema)
        return schema, array


def _distinct_keys(group: pa.Table) -> pl.DataFrame:
    """A row group's distinct keys (see :func:`roads.store.key_runs.key_pairs`)."""
    return _key_frame(key_pairs(group) or group)


_KEYS = {"table_id": pl.String, "shoe_id": pl.String, "path": pl.String}


def _sql_frame(db: Any, table: str, schema: dict[str, Any], where: str = "",
               arrays: dict[str, str] | None = None) -> pl.DataFrame:
    """Columns of a table as a frame: each column comes back from SQLite as one JSON array
    (``json_group_array``, built in C) instead of a Python tuple a row, decoded by polars
    (outside the GIL, beside the journal's checks). ``arrays``: the table's columns read
    so already."""
    if arrays is None:
        arrays = column_arrays(db, table, list(schema), where)
    return pl.DataFrame({c: pl.Series([arrays[c]]).str.json_decode(pl.List(t))
                         .explode(empty_as_null=False) for c, t in schema.items()})


def _catalogue_shoe_tables(store: Store, table: str,
                           ahead: Future[dict[str, str]] | None = None) -> pl.DataFrame:
    """The catalogue's shoe list of every file (``catalog_shoes``) or its shoe index
    (``shoe_index``), on this thread's own reader (the two are read side by side), or as
    read ahead."""
    schema = _KEYS if table == "catalog_shoes" else {**catalog.INDEX_SCHEMA, "path": pl.String}
    arrays = ahead.result() if ahead is not None and ahead.exception() is None else None
    return _sql_frame(store.journal.reader(), table, schema, arrays=arrays)


def _attempt(read: Callable[[Store, FileEntry], pl.DataFrame], store: Store,
             entry: FileEntry) -> pl.DataFrame | None:
    """``read(store, entry)`` ahead of the checks, or None where the file does not read (a
    missing or altered file: the checks name it and never use what it holds)."""
    try:
        return read(store, entry)
    except (OSError, pl.exceptions.PolarsError, pa.ArrowException):
        return None


def _read(pool: Executor, read: Callable[[Store, FileEntry], pl.DataFrame], store: Store,
          entries: list[FileEntry], ahead: dict[str, Future[pl.DataFrame | None]]
          ) -> list[pl.DataFrame]:
    """What intact files hold: read ahead, or read now (a file only the journal lists, or
    one that did not read ahead, which raises here)."""
    later = [ahead.get(e.path) or pool.submit(read, store, e) for e in entries]
    done = [f.result() for f in later]
    return [read(store, e) if d is None else d for d, e in zip(done, entries, strict=True)]


def _differ(mine: pl.DataFrame, theirs: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The rows of either frame that the other lacks (nulls equal). The two frames are first
    compared whole, sorted by their keys: when nothing was changed, as almost always, that
    is cheaper than the two joins that name what differs."""
    if mine.height == theirs.height and mine.sort(keys).equals(theirs.sort(keys)):
        return mine.clear()
    return pl.concat([mine.join(theirs, on=mine.columns, how="anti", nulls_equal=True),
                      theirs.join(mine, on=mine.columns, how="anti", nulls_equal=True)])


def _held_twice(store: Store, entries: list[FileEntry], intact: list[FileEntry],
                report: Report, pool: Executor, shoe_tables: tuple[pl.DataFrame, pl.DataFrame],
                ahead: dict[str, Future[pl.DataFrame | None]]) -> None:
    """Files against the catalogue's shoe lists and shoe index; coups or shoe rows stored
    twice; imported copies of live shoes. Frames, not loops: one pass a file. ``entries``:
    every file the journal names (``intact``: those whose bytes are as journaled)."""
    shoe_files = [e for e in intact if e.table == "shoes"]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="roads-index") as side:
        # the shoes files against the shoe index beside the coups files' checks below (the
        # two share nothing, and polars' sorts and joins run without the GIL); its problems
        # are reported where they always were
        index_problems = side.submit(_against_shoe_index, store, shoe_files, pool,
                                     shoe_tables[1], ahead)
        _held_twice_coups(store, entries, intact, report, pool, shoe_tables, ahead,
                          index_problems)


def _held_twice_coups(store: Store, entries: list[FileEntry], intact: list[FileEntry],
                      report: Report, pool: Executor,
                      shoe_tables: tuple[pl.DataFrame, pl.DataFrame],
                      ahead: dict[str, Future[pl.DataFrame | None]],
                      index_problems: Future[Report]) -> None:
    """:func:`_held_twice` but for the shoes files against the shoe index (their problems,
    ``index_problems``, go in after the coups files')."""
    db = store.journal.connection()
    for table_id, shoe_id, seqs in db.execute(
            "SELECT table_id, shoe_id, group_concat(seq, ', ') FROM events "
            "WHERE kind = 'shoe_sealed' GROUP BY table_id, shoe_id HAVING count(*) > 1"):
        report.add("held twice", f"{table_id}/{shoe_id}",
                   f"the shoe was sealed more than once (events {seqs})")
    coups_files = [e for e in intact if e.table == "coups"]
    found = pl.concat([pl.DataFrame(schema=_KEYS),
                       *_read(pool, _keys, store, coups_files, ahead)])
    listed, indexed_all = shoe_tables
    for rows, kind in ((listed, "coups"), (indexed_all, "shoes")):
        # a row under a path the journal names no file of its kind for would send a reader
        # to the wrong file (or to none): the comparisons below see only the right kind
        named = [e.path for e in entries if e.table == kind]
        for path in sorted(set(rows.filter(~pl.col("path").is_in(named))["path"].to_list())):
            report.add("catalogue", path, f"the catalogue lists shoes under this path, which "
                                          f"is no {kind} file the journal names")
    listed = listed.filter(pl.col("path").is_in([e.path for e in coups_files]))
    differ = _differ(found, listed, list(_KEYS))
    for path in sorted(set(differ["path"].to_list())):
        report.add("catalogue", path, "the shoes this file holds are not the shoes the "
                                      "catalogue lists for it")
    split = found.filter(pl.struct("table_id", "shoe_id").is_duplicated())
    for (table_id, shoe_id), rows in split.group_by("table_id", "shoe_id",
                                                    maintain_order=True):
        paths = rows["path"].to_list()
        numbers = pl.concat([pl.read_parquet(store.root / p, glob=False,
                                             columns=["table_id", "shoe_id", "coup"])
                             .filter((pl.col("table_id") == table_id)
                                     & (pl.col("shoe_id") == shoe_id)) for p in paths])["coup"]
        if numbers.n_unique() != numbers.len():
            report.add("held twice", f"{table_id}/{shoe_id}",
                       f"coups of this shoe are stored in more than one file ({', '.join(paths)})")
    report.problems += index_problems.result().problems
    opened = _sql_frame(db, "events", {"table_id": pl.String, "shoe_id": pl.String},
                        "WHERE kind = 'shoe_opened' AND NOT EXISTS (SELECT 1 FROM events s "
                        "WHERE s.kind = 'shoe_sealed' AND s.table_id = events.table_id AND "
                        "s.shoe_id = events.shoe_id)").unique()
    copies = found.join(opened, on=["table_id", "shoe_id"], how="semi")
    for table_id, shoe_id, path in copies.sort("table_id", "shoe_id").iter_rows():
        report.add("held twice", f"{table_id}/{shoe_id}",
                   f"a live shoe of the journal is also stored as another shoe's file ({path})")


def _against_shoe_index(store: Store, shoe_files: list[FileEntry], pool: Executor,
                        indexed_all: pl.DataFrame,
                        ahead: dict[str, Future[pl.DataFrame | None]]) -> Report:
    """The intact shoes files against the catalogue's shoe index, and shoe rows stored
    twice (a report of its own: it runs beside the coups files' checks)."""
    report = Report()
    frames = _read(pool, _shoes_rows, store, shoe_files, ahead)
    if frames:
        rows = pl.concat(frames, how="vertical_relaxed")
        mine = _index_of(rows)
        indexed = indexed_all.filter(pl.col("path").is_in([e.path for e in shoe_files]))
        wrong = _differ(mine, indexed, list(_KEYS))
        for path in sorted(set(wrong["path"].to_list())):
            report.add("catalogue", path, "the shoe index does not list this file's shoes "
                                          "as the file holds them")
        twice = rows.group_by("table_id", "shoe_id").len().filter(pl.col("len") > 1)
        for table_id, shoe_id, n in twice.sort("table_id", "shoe_id").iter_rows():
            report.add("held twice", f"{table_id}/{shoe_id}", f"{n} shoe rows for one shoe")
    return report


def _shoes_rows(store: Store, entry: FileEntry) -> pl.DataFrame:
    """A shoes file's rows (the columns the shoe index keeps: its burn cards are no
    concern of the index, and decoding them was a fifth of the read), with its path."""
    return pl.read_parquet(store.root / entry.path, columns=list(catalog.INDEX_COLUMNS),
                           glob=False) \
        .with_columns(pl.lit(entry.path).alias("path"))


def _index_of(rows: pl.DataFrame) -> pl.DataFrame:
    """The shoe index rows the shoes files' rows give (as the store writes them, a row
    each), with their paths."""
    return shoe_index_frame(rows.drop("path")).with_columns(rows["path"])


_PAYLOAD = pl.Struct({"coup": pl.Int64, "outcome": pl.String,
                      "player_cards": pl.List(pl.String), "banker_cards": pl.List(pl.String),
                      "player_total": pl.Int64, "banker_total": pl.Int64,
                      "natural": pl.Boolean, "player_pair": pl.Boolean,
                      "banker_pair": pl.Boolean, "dealt_at": pl.String, "source": pl.String,
                      "entry": pl.String})


def entered_coups(db: Any) -> pl.DataFrame:
    """The canonical coups the journal's ``coup_entered`` events of every sealed shoe
    entered (as :func:`~roads.store.journaled.shoe_frames` builds them one shoe at a time),
    decoded in one pass."""
    rows = db.execute(
        "SELECT e.table_id, e.shoe_id, e.actor, e.payload FROM events e WHERE "
        "e.kind = 'coup_entered' AND EXISTS (SELECT 1 FROM events s WHERE s.kind = "
        "'shoe_sealed' AND s.table_id = e.table_id AND s.shoe_id = e.shoe_id AND "
        "s.seq > e.seq) ORDER BY e.seq").fetchall()
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                       "entered_by": pl.String, "payload": pl.String},
                         orient="row")
    fields = frame["payload"].str.json_decode(_PAYLOAD).struct.unnest()
    coups = pl.concat([frame.drop("payload"), fields], how="horizontal").with_columns(
        pl.col("dealt_at").str.to_datetime(time_unit="us", time_zone="UTC"))
    return conform(coups, "coups")


def _sealed_against_journal(store: Store) -> Report:
    """Each sealed shoe's journaled coups file content against its coup_entered events (a
    report of its own: it runs beside the other checks, on this thread's connection)."""
    report = Report()
    db = store.journal.connection()
    seals = store.journal.of_kinds(("shoe_sealed",))
    try:
        entered = entered_coups(db)
    except (InputError, pl.exceptions.PolarsError) as exc:  # (a payload edited in place)
        report.add("differs from journal", "coup_entered events",
                   f"an entered coup holds what no coup can hold, so no sealed shoe can be "
                   f"checked against its events ({str(exc).splitlines()[0][:120]})")
        return report
    digests = {(t, s): d for t, s, d in shoe_digests(entered).iter_rows()}
    opened = {(r[0], r[1]) for r in db.execute(
        "SELECT table_id, shoe_id FROM events WHERE kind = 'shoe_opened'")}
    for seal in seals:
        report.sealed_shoes += 1
        key = (seal.table_id, seal.shoe_id or "")
        if key not in opened:
            report.add("differs from journal", f"{key[0]}/{key[1]}",
                       "sealed, but the journal has no shoe_opened event for it")
            continue
        expected = combine_leaves([leaf(*key, digests[key])]) if key in digests else \
            coups_digest(conform(pl.DataFrame(schema=COUPS), "coups"))
        files = [f for f in seal.payload.get("files", []) if f.get("table") == "coups"]
        if not files and key not in digests:
            continue  # a shoe closed without a coup: nothing sealed but its row
        if not files or files[0].get("content") != expected:
            report.add("differs from journal", f"{key[0]}/{key[1]}",
                       "the sealed file's coups are not the coups its journal events entered")
    return report


def _decode(store: Store, intact: list[FileEntry], report: Report) -> None:
    for e in intact:
        try:
            frame = pl.read_parquet(store.root / e.path, glob=False)
        except (pl.exceptions.PolarsError, OSError) as exc:
            report.add("unreadable", e.path, str(exc).splitlines()[0])
            continue
        if frame.height != e.rows or table_digest(frame, e.table) != e.content:
            report.add("unreadable", e.path, "its rows do not give the content digest it "
                                             "was journaled with")


__all__ = ["KINDS", "Report", "cheap_problems", "shoe_digests", "verify"]
