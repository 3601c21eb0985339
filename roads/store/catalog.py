"""The catalogue: which stored files exist, as the journal says, and which shoes they hold.

Every file the store publishes or removes is journaled (SHA-256, bytes, rows, content
digest, day) in the same transaction that updates two derived tables beside the journal:
``catalog`` (one row per live file) and ``catalog_shoes`` (which shoes each coups file
holds). Readers list files only from here, so a file that no committed event names — the
leftovers of a killed ingest, a file dropped in by hand — is never read, and a run becomes
visible all at once when its one event commits. ``roads store verify`` rebuilds both tables
from the journal and the files and compares.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

import polars as pl

from roads.store.journal import Event

SCHEMA = """
CREATE TABLE IF NOT EXISTS catalog (
    path TEXT PRIMARY KEY, tbl TEXT NOT NULL, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
    rows INTEGER NOT NULL, content TEXT NOT NULL, day TEXT NOT NULL, source TEXT NOT NULL,
    seq INTEGER NOT NULL, kept_since TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS catalog_day ON catalog(tbl, day);
CREATE TABLE IF NOT EXISTS catalog_shoes (
    table_id TEXT NOT NULL, shoe_id TEXT NOT NULL, path TEXT NOT NULL,
    PRIMARY KEY (table_id, shoe_id, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS shoe_index (
    table_id TEXT NOT NULL, shoe_id TEXT NOT NULL, path TEXT NOT NULL, rules TEXT,
    decks INTEGER, coups INTEGER, started_at TEXT, ended_at TEXT, source TEXT,
    PRIMARY KEY (table_id, shoe_id, path)) WITHOUT ROWID;
"""
#: What the history pages page by: the newest shoes first.
NEWEST_INDEX = ("CREATE INDEX IF NOT EXISTS shoe_index_newest "
                "ON shoe_index(started_at DESC, table_id, shoe_id)")
#: The shoe rows the index keeps of every stored shoes file (what the history pages list).
INDEX_SCHEMA: dict[str, pl.DataType] = {
    "table_id": pl.String(), "shoe_id": pl.String(), "rules": pl.String(),
    "decks": pl.Int64(), "coups": pl.Int64(), "started_at": pl.String(),
    "ended_at": pl.String(), "source": pl.String()}
INDEX_COLUMNS = tuple(INDEX_SCHEMA)
KEYS: dict[str, pl.DataType] = {"table_id": pl.String(), "shoe_id": pl.String()}
UNDATED = "undated"


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One stored file as journaled. ``kept_since``: the newest journal time of what it
    holds (retention counts from there); ``day``: its date partition."""

    path: str
    table: str
    sha256: str
    bytes: int
    rows: int
    content: str
    day: str
    source: str
    kept_since: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileEntry:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data})

    @property
    def day_date(self) -> date | None:
        return None if self.day == UNDATED else date.fromisoformat(self.day)


def install(db: sqlite3.Connection) -> None:
    db.executescript(f"{SCHEMA}{NEWEST_INDEX};")


def _stored_shoe_rows(db: sqlite3.Connection) -> int:
    """The shoe index's rows, from the catalogue's file sizes (no scan of the index)."""
    return int(db.execute("SELECT coalesce(sum(rows), 0) FROM catalog WHERE tbl = 'shoes'"
                          ).fetchone()[0])


def _paths(paths: Iterable[str]) -> str:
    """Paths as one JSON parameter for ``IN (SELECT value FROM json_each(?))``."""
    return json.dumps(list(paths))


def _forget(db: sqlite3.Connection, paths: Sequence[str]) -> None:
    """Drop the shoe rows of ``paths``: one scan per table (the shoe tables carry no index
    by path: every bulk commit would pay for it, and only replacing or removing files,
    rare events, needs it)."""
    if paths:
        for table in ("catalog_shoes", "shoe_index"):
            db.execute(f"DELETE FROM {table} WHERE path IN (SELECT value FROM json_each(?))",
                       (_paths(paths),))


#: Up to this many shoe rows a file event sorts them in Python: a seal adds two rows, and
#: polars' concatenation, deduplication and sort cost a millisecond for them.
SMALL = 512


@dataclass(frozen=True, slots=True)
class ShoeRows:
    """The rows a file event adds to ``catalog_shoes`` and ``shoe_index``, in key order
    (appends to the B-trees rather than inserts all over them), sorted before the event's
    transaction begins: every other writer waits while it is held."""

    shoes: Iterable[tuple[Any, ...]]
    index: Iterable[tuple[Any, ...]]


def shoe_rows(added: Sequence[FileEntry], shoes: dict[str, pl.DataFrame],
              index: dict[str, pl.DataFrame] | None = None) -> ShoeRows:
    """``shoes``: the (table_id, shoe_id) of each added coups file; ``index``: the shoe
    rows (:data:`INDEX_SCHEMA`) of each added shoes file."""
    paths = {f.path for f in added}
    return ShoeRows(
        _sorted({p: f for p, f in shoes.items() if p in paths}, ("table_id", "shoe_id")),
        _sorted({p: f for p, f in (index or {}).items() if p in paths}, INDEX_COLUMNS))


def _sorted(frames: dict[str, pl.DataFrame], columns: Sequence[str], path_at: int = 2
            ) -> Iterable[tuple[Any, ...]]:
    """Every added file's rows of ``columns`` (``table_id``, ``shoe_id`` first) with its
    path inserted at ``path_at``, once each, sorted; streamed from polars when there are
    many. A few rows are taken column by column (``get_column``, eager): a ``select`` runs
    polars' query engine and wakes its thread pool, 0.2-0.9 ms of CPU and up to 20 ms of
    waiting for a seal's two files on the shared machine, against 0.03 ms."""
    tagged = {p: f for p, f in frames.items() if not f.is_empty()}
    if sum(f.height for f in tagged.values()) <= SMALL:
        rows: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        for path, frame in tagged.items():
            for r in zip(*(frame.get_column(c).to_list() for c in columns), strict=True):
                rows.setdefault((r[0], r[1], path), (*r[:path_at], path, *r[path_at:]))
        return [rows[key] for key in sorted(rows)]
    whole = pl.concat([f.select(*columns).with_columns(pl.lit(p).alias("path"))
                       for p, f in tagged.items()]
                      ).unique(subset=["table_id", "shoe_id", "path"], keep="first")
    ordered = list(columns)
    ordered.insert(path_at, "path")
    return whole.sort("table_id", "shoe_id", "path").select(ordered).iter_rows()


_STAGING = """
CREATE TEMP TABLE IF NOT EXISTS staged_files (file INTEGER PRIMARY KEY, path TEXT NOT NULL);
CREATE TEMP TABLE IF NOT EXISTS staged_shoes (table_id TEXT, shoe_id TEXT, file INTEGER,
    k INTEGER, PRIMARY KEY (table_id, shoe_id, file, k)) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS staged_index (table_id TEXT, shoe_id TEXT, file INTEGER,
    k INTEGER, rules TEXT, decks INTEGER, coups INTEGER, started_at TEXT, ended_at TEXT,
    source TEXT, PRIMARY KEY (table_id, shoe_id, file, k)) WITHOUT ROWID;
DELETE FROM staged_files; DELETE FROM staged_shoes; DELETE FROM staged_index;
"""
#: The staged rows of the files a commit names, in key order: the staging tables are kept
#: in that order as rows arrive (``k``: a row's place in its file, so the first staged of
#: equal keys comes first), and the outer loop over them keeps it, so the commit's copy
#: needs no sort (sorting 200,000 shoe rows was half of an engine run's commit).
_STAGED = ("FROM {table} s CROSS JOIN staged_files f ON f.file = s.file "
           "WHERE f.path IN (SELECT value FROM json_each(?)) "
           "ORDER BY s.table_id, s.shoe_id, s.file, s.k")


class StagedRows:
    """The shoe rows of a bulk run's files, staged in temporary tables of one connection
    as each file is written, until the run's one commit copies them in.

    A run holding every file's rows for its commit grew with the number of shoes, and the
    commit bound a Python tuple per row inside the journal's write lock; staged, memory
    stays flat and the commit is two ``INSERT ... SELECT`` that SQLite sorts itself.
    Temporary tables belong to their connection and vanish with it: a killed run leaves
    nothing, and nothing but the commit on that connection ever sees them."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.rows = 0
        self.index_rows = 0
        self._files = 0
        db.executescript(_STAGING)

    def add(self, path: str, shoes: pl.DataFrame | None, index: pl.DataFrame | None
            ) -> None:
        """Stage one written file's rows: ``shoes``, the (table_id, shoe_id) of a coups
        file; ``index``: a shoes file's :data:`INDEX_SCHEMA` rows."""
        self._files += 1
        file = self._files
        self.db.execute("BEGIN")  # one transaction of the temporary database, not a row each
        try:
            self.db.execute("INSERT INTO staged_files VALUES (?, ?)", (file, path))
            if shoes is not None and shoes.height:
                self.db.executemany(f"INSERT INTO staged_shoes VALUES (?, ?, {file}, ?)",
                                    _in_key_order(shoes.select("table_id", "shoe_id")))
                self.rows += shoes.height
            if index is not None and index.height:
                self.db.executemany(
                    f"INSERT INTO staged_index VALUES (?, ?, {file}, ?, ?, ?, ?, ?, ?, ?)",
                    _in_key_order(index.select(*INDEX_COLUMNS)))
                self.rows += index.height
                self.index_rows += index.height
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def publish(self, db: sqlite3.Connection, paths: Iterable[str]) -> None:
        """Copy the staged rows of ``paths`` into the shoe tables, in key order, once each
        (the first staged of equal keys, as :func:`shoe_rows` keeps). ``db``: the event's
        transaction, which must be on the staging connection (only it sees the rows)."""
        if db is not self.db:
            raise ValueError("staged rows are committed on the connection that staged them")
        db.execute("INSERT OR IGNORE INTO catalog_shoes SELECT s.table_id, s.shoe_id, f.path "
                   + _STAGED.format(table="staged_shoes"), (_paths(paths),))
        rebuild = 2 * self.index_rows > _stored_shoe_rows(db)  # these rows counted there
        if rebuild:  # an index built once from sorted rows costs a third of one kept row by row
            db.execute("DROP INDEX IF EXISTS shoe_index_newest")
        db.execute(
            "INSERT OR IGNORE INTO shoe_index SELECT s.table_id, s.shoe_id, f.path, s.rules, "
            "s.decks, s.coups, s.started_at, s.ended_at, s.source "
            + _STAGED.format(table="staged_index"), (_paths(paths),))
        if rebuild:
            db.execute(NEWEST_INDEX)

    def close(self) -> None:
        """Drop the staging tables (a run's last step, committed or not)."""
        self.db.executescript("DROP TABLE IF EXISTS temp.staged_files; "
                              "DROP TABLE IF EXISTS temp.staged_shoes; "
                              "DROP TABLE IF EXISTS temp.staged_index;")


def _in_key_order(frame: pl.DataFrame) -> Iterator[tuple[Any, ...]]:
    """A file's rows (``table_id``, ``shoe_id`` first) sorted by those two, each with its
    place in the file after them: appended where they go in the staging tables' order."""
    return frame.with_row_index("k").select(
        "table_id", "shoe_id", "k", *frame.columns[2:]).sort(
        "table_id", "shoe_id", "k", maintain_order=True).iter_rows()


def record(db: sqlite3.Connection, seq: int, at: str, added: Sequence[FileEntry],
           rows: ShoeRows | StagedRows, removed: Sequence[str] = ()) -> None:
    """Apply one file event to the derived tables (inside the event's transaction)."""
    replaced = [r[0] for r in db.execute(
        "SELECT path FROM catalog WHERE path IN (SELECT value FROM json_each(?))",
        (_paths(f.path for f in added),))]
    db.executemany("DELETE FROM catalog WHERE path = ?", [(p,) for p in removed])
    _forget(db, [*removed, *replaced])
    db.executemany("INSERT OR REPLACE INTO catalog VALUES (?,?,?,?,?,?,?,?,?,?)",
                   [(f.path, f.table, f.sha256, f.bytes, f.rows, f.content, f.day, f.source,
                     seq, f.kept_since or at) for f in added])
    if isinstance(rows, StagedRows):
        rows.publish(db, [f.path for f in added])
        return
    db.executemany("INSERT OR IGNORE INTO catalog_shoes VALUES (?,?,?)", rows.shoes)
    db.executemany("INSERT OR IGNORE INTO shoe_index VALUES (?,?,?,?,?,?,?,?,?)", rows.index)


_COLUMNS = "path, tbl, sha256, bytes, rows, content, day, source, kept_since"


def _entry(row: tuple[Any, ...]) -> FileEntry:
    return FileEntry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8])


def files(db: sqlite3.Connection, table: str | None = None) -> list[FileEntry]:
    """Every live file (of one canonical table), in path order."""
    sql = f"SELECT {_COLUMNS} FROM catalog"
    args: tuple[Any, ...] = ()
    if table is not None:
        sql += " WHERE tbl = ?"
        args = (table,)
    return [_entry(r) for r in db.execute(sql + " ORDER BY path", args).fetchall()]


#: Shoe keys passed as one JSON parameter (``[[table_id, shoe_id], ...]``), as a table.
_KEYS = ("(SELECT json_extract(value, '$[0]') AS t, json_extract(value, '$[1]') AS s "
         "FROM json_each(?))")


def holding(db: sqlite3.Connection, table: str, shoes: Iterable[tuple[str, str]]
            ) -> list[tuple[str, str, str]]:
    """``(table_id, shoe_id, path)`` of every row of ``table`` (``catalog_shoes``: coups
    files, ``shoe_index``: shoes files) for one of ``shoes``: a key lookup per shoe, so an
    import into a store of millions of shoes reads only the rows of its own."""
    if table not in ("catalog_shoes", "shoe_index"):  # (the name goes into the SQL)
        raise ValueError(f"not a shoe table of the catalogue: {table!r}")
    shoes = list(dict.fromkeys(shoes))  # (each row once, however often a shoe is asked)
    present = {t for t in {t for t, _ in shoes} if db.execute(  # (a new table's: none)
        f"SELECT 1 FROM {table} WHERE table_id = ? LIMIT 1", (t,)).fetchone()}
    wanted = [list(k) for k in shoes if k[0] in present]
    if not wanted:
        return []
    return db.execute(f"SELECT c.table_id, c.shoe_id, c.path FROM {_KEYS} k CROSS JOIN "
                      f"{table} c ON c.table_id = k.t AND c.shoe_id = k.s",
                      (json.dumps(wanted),)).fetchall()


def files_of_shoes(db: sqlite3.Connection, table_id: str | None, shoe_id: str | None,
                   shoes: Iterable[tuple[str, str]] | None = None) -> list[str]:
    """The coups files holding a table's (or a shoe's, or some shoes') coups."""
    if shoes is not None:
        return sorted({p for t, s, p in holding(db, "catalog_shoes", shoes)
                       if (table_id is None or t == table_id)
                       and (shoe_id is None or s == shoe_id)})
    sql, args = "SELECT DISTINCT path FROM catalog_shoes WHERE 1=1", []
    if table_id is not None:
        sql += " AND table_id = ?"
        args.append(table_id)
    if shoe_id is not None:
        sql += " AND shoe_id = ?"
        args.append(shoe_id)
    return [r[0] for r in db.execute(sql + " ORDER BY path", args).fetchall()]


def stored_shoes(db: sqlite3.Connection) -> set[tuple[str, str]]:
    return {(r[0], r[1]) for r in db.execute(
        "SELECT DISTINCT table_id, shoe_id FROM catalog_shoes").fetchall()}


def split_shoes(db: sqlite3.Connection, table_id: str | None = None,
                keys: Iterable[tuple[str, str]] | None = None) -> set[tuple[str, str]]:
    """Shoes whose coups more than one coups file holds: a shoe imported in parts (a later
    file carrying its later coups). Its shoe row was written by the first part only, so
    readers count such a shoe from its coups. ``keys``: only among these shoes."""
    if keys is not None:
        return {(r[0], r[1]) for r in db.execute(
            f"SELECT c.table_id, c.shoe_id FROM {_KEYS} k CROSS JOIN catalog_shoes c "
            "ON c.table_id = k.t AND c.shoe_id = k.s "
            "GROUP BY c.table_id, c.shoe_id HAVING count(*) > 1",
            (json.dumps([list(k) for k in keys]),)).fetchall()}
    where, args = ("WHERE table_id = ? ", (table_id,)) if table_id is not None else ("", ())
    return {(r[0], r[1]) for r in db.execute(
        f"SELECT table_id, shoe_id FROM catalog_shoes {where}"
        "GROUP BY table_id, shoe_id HAVING count(*) > 1", args).fetchall()}


def shoes_of(db: sqlite3.Connection, paths: Sequence[str]) -> dict[str, set[tuple[str, str]]]:
    """The shoes each of ``paths`` holds (one scan, see :func:`_forget`)."""
    out: dict[str, set[tuple[str, str]]] = {p: set() for p in paths}
    for t, s, path in db.execute(
            "SELECT table_id, shoe_id, path FROM catalog_shoes "
            "WHERE path IN (SELECT value FROM json_each(?))", (_paths(paths),)).fetchall():
        out[path].add((t, s))
    return out


def is_stored(db: sqlite3.Connection, table_id: str, shoe_id: str) -> bool:
    return db.execute("SELECT 1 FROM catalog_shoes WHERE table_id = ? AND shoe_id = ? LIMIT 1",
                      (table_id, shoe_id)).fetchone() is not None


def removed_paths(events: Iterable[Event]) -> set[str]:
    """Paths a committed compaction or purge removed (a kill during its deletions leaves
    some behind: the next bulk run's sweep deletes them, verify names them as such)."""
    return {path for e in events if e.kind in ("store_compacted", "data_purged")
            for path in e.payload.get("removed", ())}


def replay(events: Iterable[Event]) -> dict[str, FileEntry]:
    """The live files as the journal's file events say, from scratch (for verification)."""
    live: dict[str, FileEntry] = {}
    for e in events:
        for path in e.payload.get("removed", ()):
            live.pop(path if isinstance(path, str) else path["path"], None)
        for item in e.payload.get("files", ()):
            entry = FileEntry.from_json(item)
            live[entry.path] = FileEntry(**{**entry.to_json(),
                                            "kept_since": entry.kept_since or e.at})
    return live
