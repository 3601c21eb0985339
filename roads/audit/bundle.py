"""Export bundles a regulator can check offline, years later, with one command.

A bundle is a directory of open formats, each table as CSV and Parquet:

- ``coups``: every coup of the slice's shoes, corrections applied, voided coups kept and
  marked (``correction``: ``amended`` / ``voided``), each saying how it was entered and by
  whom (``entry``, ``entered_by``);
- ``shoes``: every shoe those coups belong to, ``open`` for a shoe still in play;
- ``corrections``: every void and amendment, original and amended values side by side,
  who asked, who approved, why;
- ``journal``: the journal from the slice's first event to the head signed at export time —
  the slice's own events in full, every other event as a redacted link (sequence, table,
  shoe, digests) so the chain still verifies but nothing of other tables leaks; logins only
  when the export asks for them;
- ``file_shoes``: for each stored file holding the slice's shoes, its shoes' digests in key
  order (other shoes as opaque leaves), which recompute the content digest the journal
  recorded for that file, and which coups of each shoe the file holds (a shoe imported in
  parts is in several files);
- ``checkpoints.jsonl`` and ``store-key.pub``: the store's signed checkpoints of the journal's
  head, and the key they verify with.

``manifest.json`` lists every file's SHA-256, size and row count, the journal range, the
export parameters and the store key's fingerprint; ``manifest.sig`` optionally signs it
(Ed25519). :func:`verify` needs nothing but the bundle (and the public key).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
from tqdm import tqdm

from roads import __version__
from roads.audit.stream import write_chunks
from roads.errors import InputError
from roads.files import commit, publish, sha256, temporary_name
from roads.schema import CONTENT, COUPS, SCHEMA_VERSION, SHOE_KEY, conform
from roads.store import MARK, SYSTEM, Event, Reader, Selection, Store
from roads.store.checkpoint import line_of
from roads.store.journal import FILE_KINDS, canonical

MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
CHECKPOINTS = "checkpoints.jsonl"
STORE_KEY = "store-key.pub"
LOGIN_KINDS = ("login", "login_failed", "logout", "login_refused", "user_added",
               "user_changed", "user_disabled", "user_enabled", "token_issued",
               "token_revoked", "api_key_revoked")


def _content_columns(prefix: str) -> dict[str, pl.DataType]:
    out: dict[str, pl.DataType] = {}
    for c in CONTENT:
        if c.endswith("_cards") or c == "outcome":
            out[f"{prefix}_{c}"] = pl.String()
        elif c.endswith("_total"):
            out[f"{prefix}_{c}"] = pl.Int8()
        else:
            out[f"{prefix}_{c}"] = pl.Boolean()
    return out


CORRECTIONS: dict[str, pl.DataType] = {
    "seq": pl.Int64(), "at": pl.String(), "kind": pl.String(), "table_id": pl.String(),
    "shoe_id": pl.String(), "coup": pl.Int32(), "requested_by": pl.String(),
    "approved_by": pl.String(), "reason": pl.String(), "request": pl.Int64(),
    **_content_columns("original"), **_content_columns("amended"),
}
JOURNAL: dict[str, pl.DataType] = {
    "seq": pl.Int64(), "at": pl.String(), "kind": pl.String(), "table_id": pl.String(),
    "shoe_id": pl.String(), "actor": pl.String(), "payload": pl.String(),
    "body_sha256": pl.String(), "prev_hash": pl.String(), "hash": pl.String(),
    "redacted": pl.Boolean()}
FILE_SHOES: dict[str, pl.DataType] = {
    "path": pl.String(), "position": pl.Int64(), "table_id": pl.String(),
    "shoe_id": pl.String(), "digest": pl.String(), "leaf": pl.String(),
    "coups": pl.String()}
FORMATS = ("pdf", "csv", "parquet", "xlsx")
PDF_MAX_COUPS = 50_000
#: Files whose digests make up the data digest printed on every PDF page.
DATA_FILES = (*(f"{t}.{x}" for t in ("coups", "shoes", "corrections", "journal", "file_shoes")
                for x in ("parquet", "csv")), "journal.jsonl", CHECKPOINTS, STORE_KEY)


@dataclass(frozen=True)
class Slice:
    """What to export: one shoe, a table-day, or a date range (of one table or all).

    A bundle always holds whole shoes: a day or a range selects the shoes that began in it
    (the day a shoe is filed under), so each shoe can be checked against the journal."""

    table_id: str | None = None
    shoe_id: str | None = None
    day: date | None = None
    start: date | None = None
    end: date | None = None

    def describe(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, date) else v)
                for k, v in self.__dict__.items() if v is not None}

    def words(self) -> str:
        """The slice as an officer would say it ("table T9, shoe H1, 2026-03-01")."""
        said = [f"{label} {v.isoformat() if isinstance(v, date) else v}"
                for label, v in (("table", self.table_id), ("shoe", self.shoe_id),
                                 ("day", self.day), ("from", self.start), ("to", self.end))
                if v is not None]
        return ", ".join(said) or "the whole store"

    def selection(self) -> Selection:
        return Selection(self.table_id, self.shoe_id, self.day or self.start,
                         self.day or self.end)


#: A cell starting with one of these is a formula (or becomes one) in a spreadsheet: OWASP's
#: CSV-injection rule. Such a cell is written with a leading ``'``, which spreadsheets show
#: as text; the Parquet and JSONL files keep the exact value.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: The manifest's note that CSV and XLSX cells are escaped (bundles before it were not).
INERT_CELLS = "owasp-formula-prefix"


def _text_may_start_formula(dtype: pl.DataType) -> bool:
    """Whether a column's text form can start like a formula: free text can; an enum (or a
    list of one, joined) only when one of its categories does (cards and outcomes never)."""
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    if isinstance(inner, pl.Enum):
        return any(c.startswith(FORMULA_START) for c in inner.categories.to_list())
    return isinstance(inner, pl.String | pl.Categorical)


def _inert(text: pl.Expr) -> pl.Expr:
    return pl.when(text.str.slice(0, 1).is_in(FORMULA_START)).then(pl.lit("'") + text) \
        .otherwise(text)


def csv_ready(frame: pl.DataFrame, inert: bool = True) -> pl.DataFrame:
    """Lists of cards as space-separated codes, times as ISO 8601, and (``inert``) text a
    spreadsheet would run as a formula escaped: plain, portable, inert CSV. Numbers stay
    numbers (a negative total is a number, not text to escape)."""
    out = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            text = col.cast(pl.List(pl.String)).list.join(" ")
        elif isinstance(dtype, pl.Datetime):
            text = col.dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ")
        elif isinstance(dtype, pl.Enum | pl.Categorical | pl.String):
            text = col.cast(pl.String)
        else:
            out.append(col)
            continue
        out.append((_inert(text) if inert and _text_may_start_formula(dtype) else text)
                   .alias(name))
    return frame.select(out)



def data_digest(files: dict[str, dict[str, Any]]) -> str:
    """SHA-256 over the data files' names and digests: one number that names the data."""
    body = "".join(f"{name} {files[name]['sha256']}\n" for name in sorted(files)
                   if name in DATA_FILES)
    return hashlib.sha256(body.encode()).hexdigest()


def _cards_text(value: Any) -> str | None:
    return " ".join(value) if value else None


def content_cells(row: dict[str, Any] | None) -> dict[str, Any]:
    """A coup's :data:`~roads.schema.CONTENT` as the corrections table holds it (cards as
    text, the outcome as its letter); all None without a coup."""
    if row is None:
        return dict.fromkeys(CONTENT)
    out = {}
    for c in CONTENT:
        v = row.get(c)
        out[c] = _cards_text(v) if c.endswith("_cards") else \
            (None if v is None else str(v) if c == "outcome" else v)
    return out


def _content(prefix: str, row: dict[str, Any] | None) -> dict[str, Any]:
    return {f"{prefix}_{c}": v for c, v in content_cells(row).items()}


def _corrections(read: Reader, fixes: list[Event]) -> pl.DataFrame:
    """Every void and amendment, the coup as entered beside the corrected values."""
    if not fixes:
        return pl.DataFrame(schema=CORRECTIONS)
    keys = frozenset((e.table_id, e.shoe_id or "") for e in fixes)
    originals = read.coups(Selection(shoes=keys), originals=True)
    first = {(r["table_id"], r["shoe_id"], r["coup"]): r for r in originals.to_dicts()}
    rows = []
    for e in fixes:
        original = first.get((e.table_id, e.shoe_id, e.payload["coup"]))
        amended = None if e.kind == "coup_voided" else {**(original or {}),
                                                        **e.payload.get("new", {})}
        rows.append({
            "seq": e.seq, "at": e.at, "kind": e.kind, "table_id": e.table_id,
            "shoe_id": e.shoe_id, "coup": e.payload["coup"], "requested_by": e.actor,
            "approved_by": e.payload.get("approver"), "reason": e.payload.get("reason"),
            "request": e.payload.get("request"), **_content("original", original),
            **_content("amended", amended)})
    return pl.DataFrame(rows, schema=CORRECTIONS)


def journal_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame([{**r, "payload": None if r.get("redacted") else
                          canonical(r["payload"]), "redacted": bool(r.get("redacted"))}
                         for r in rows], schema=JOURNAL)


def _xlsx(path: Path, bundle: Path, tables: dict[str, pl.DataFrame]) -> None:
    """One workbook, one sheet per table, the coups and the journal streamed from their
    Parquet files one row group at a time (split at Excel's 1,048,575 data rows a sheet).
    Cells are the CSV's (formulas escaped) and xlsxwriter turns no string into a formula or
    a link."""
    import xlsxwriter

    limit = 1_048_575

    def frames() -> Iterator[tuple[str, pl.DataFrame]]:
        # Row group by row group: pyarrow cannot stream batches of list-of-dictionary
        # columns across row groups ("nested data conversions not implemented for chunked
        # array outputs"); a row group is one written chunk, so memory stays bounded.
        for name in ("coups", "shoes", "corrections", "journal", "file_shoes"):
            if name in tables:
                yield name, csv_ready(tables[name])
                continue
            parquet = pq.ParquetFile(bundle / f"{name}.parquet")
            for group in range(parquet.num_row_groups):
                chunk = pl.from_arrow(parquet.read_row_group(group))
                yield name, csv_ready(chunk)  # type: ignore[arg-type]

    with xlsxwriter.Workbook(str(path), {"constant_memory": True,
                                         "strings_to_numbers": False,
                                         "strings_to_formulas": False,
                                         "strings_to_urls": False}) as book:
        sheets: dict[str, tuple[Any, int, int]] = {}  # name -> (sheet, next row, part)
        for name, frame in frames():
            for row in frame.iter_rows():
                sheet, r, part = sheets.get(name, (None, 0, 0))
                if sheet is None or r > limit:
                    part += 1
                    sheet = book.add_worksheet(name if part == 1 else f"{name}_{part}")
                    sheet.write_row(0, 0, frame.columns)
                    r = 1
                sheet.write_row(r, 0, row)
                sheets[name] = (sheet, r + 1, part)
            if name not in sheets:  # an empty table still gets its sheet and header
                sheet = book.add_worksheet(name)
                sheet.write_row(0, 0, frame.columns)
                sheets[name] = (sheet, 1, 1)


def _shoes_of(read: Reader, what: Slice) -> pl.DataFrame:
    """The slice's whole shoes: chosen by id, or by the day they began."""
    return read.shoes(what.selection())


@dataclass
class JournalSlice:
    """What the bundle's journal files hold: the range, and the slice's own events in full
    (the corrections table is built from them)."""

    events: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    first_prev_hash: str | None = None
    head: str | None = None
    full: list[Event] = field(default_factory=list)


def _journal_slice(store: Store, out: Path, keys: set[tuple[str, str]], tables: set[str],
                   file_paths: set[str], head: int, logins: bool) -> JournalSlice:
    """Write the journal from the slice's first event to ``head`` (JSON lines, Parquet and
    CSV): the slice's events in full (its shoes', its tables' own, the file events behind
    its files, logins if asked), every other event redacted. Streamed in two passes (keys,
    then events), so memory does not grow with the journal."""
    lineage = set(file_paths)
    mine_file: set[int] = set()
    for e in reversed([e for e in store.journal.of_kinds(FILE_KINDS) if e.seq <= head]):
        added = {f["path"] for f in e.payload.get("files", [])}
        if added & lineage:
            mine_file.add(e.seq)
            lineage |= set(e.payload.get("removed", []))

    def belongs(seq: int, table_id: str, shoe_id: str | None, kind: str) -> bool:
        if shoe_id is not None and (table_id, shoe_id) in keys:
            return True
        if shoe_id is None and table_id in tables:
            return True
        if seq in mine_file:
            return True
        return logins and table_id == SYSTEM and kind in LOGIN_KINDS

    first = next((k[0] for k in store.journal.keys(head) if belongs(*k)), None)
    got = JournalSlice()
    names = ("journal.jsonl", "journal.parquet", "journal.csv")
    tmp = {n: temporary_name(out / n) for n in names}
    schema = pl.DataFrame(schema=JOURNAL).to_arrow().schema
    try:
        with open(tmp["journal.jsonl"], "w", encoding="utf-8") as lines, \
                open(tmp["journal.csv"], "wb") as table, \
                pq.ParquetWriter(tmp["journal.parquet"], schema) as parquet:
            batch: list[dict[str, Any]] = []

            def flush() -> None:
                frame = journal_frame(batch)
                parquet.write_table(frame.to_arrow().cast(schema))
                csv_ready(frame).write_csv(table, include_header=got.events == len(batch))
                batch.clear()

            for e in (store.journal.stream(first - 1, head) if first is not None else ()):
                mine = belongs(e.seq, e.table_id, e.shoe_id, e.kind)
                row = e.to_json() | {"body_sha256": e.body_sha256} if mine else e.redacted()
                if mine:
                    got.full.append(e)
                lines.write(json.dumps(row, ensure_ascii=False) + "\n")
                if got.first_seq is None:
                    got.first_seq, got.first_prev_hash = e.seq, e.prev_hash
                got.last_seq, got.head = e.seq, e.hash
                got.events += 1
                batch.append(row)
                if len(batch) >= 20_000:
                    flush()
            if batch or not got.events:
                flush()
        for n in names:
            commit(tmp[n], out / n)
    finally:
        for n in names:
            tmp[n].unlink(missing_ok=True)
    return got


def _file_shoes(read: Reader, keys: set[tuple[str, str]], stored: list[dict[str, Any]]
                ) -> pl.DataFrame:
    """For every stored coups file holding the slice's shoes: each shoe's digest in key
    order, other shoes' lines as opaque leaves (they recompute the file's content digest
    without naming other tables' shoes)."""
    from roads.audit.bundle_check import coup_ranges_by_shoe
    from roads.store.digest import leaf, shoe_digests

    rows = []
    for entry in stored:
        coups = read.file_coups(entry["path"])
        digests = shoe_digests(coups).sort(*SHOE_KEY)
        ranges = coup_ranges_by_shoe(coups)
        for i, (t, s, d) in enumerate(digests.iter_rows()):
            mine = (t, s) in keys
            rows.append({"path": entry["path"], "position": i, "table_id": t if mine else None,
                         "shoe_id": s if mine else None, "digest": d if mine else None,
                         "leaf": leaf(t, s, d), "coups": ranges[(t, s)] if mine else None})
    return pl.DataFrame(rows, schema=FILE_SHOES)


@contextmanager
def _bundle_directory(out: Path) -> Iterator[None]:
    """Make ``out`` (and any parent missing) for the bundle; if the export fails on the way
    (an altered stored file, a bad signing key, a full disk), remove what it wrote and the
    directories it made: no partial bundle is left to be mistaken for one (without its
    signature, a half-written one could even verify)."""
    made = [d for d in (out, *out.parents) if not d.exists()]
    out.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        for written in out.iterdir():
            if written.is_file():
                written.unlink()
        for directory in made:  # (deepest first)
            with suppress(OSError):
                directory.rmdir()
        raise


def export_bundle(store: Store, what: Slice, out: Path, exported_by: str,
                  key_file: Path | None = None, formats: tuple[str, ...] = (),
                  page_format: str = "A4", casino: str | None = None,
                  progress: bool = False, logins: bool = False) -> dict[str, Any]:
    """Write the bundle for ``what`` into ``out`` (which must not exist or be empty).

    CSV and Parquet of every table are always written (they are what ``verify`` checks
    against each other); ``formats`` adds ``pdf`` and/or ``xlsx``; ``logins`` adds the
    site's logins and account changes of the journal range (an audit export).
    """
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise InputError(f"unknown export format(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(FORMATS)}")
    if page_format not in ("A4", "Letter"):
        raise InputError(f"page format must be A4 or Letter (got {page_format!r})")
    if out.resolve().is_relative_to(store.root.resolve()):  # (through a link too)
        raise InputError(f"{out}: a bundle cannot be written inside the store it exports "
                         f"({store.root}): every file there must answer to the journal")
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out}: the bundle directory must be new or empty")
    private = _private_key(key_file) if key_file is not None else None  # (a bad key: now)
    point = store.sign_head()  # the head this bundle is cut at, signed
    if point is None:
        raise InputError(f"{store.root}: the store's checkpoints are missing, so its journal "
                         "cannot be signed for a bundle: `roads store verify` names what is "
                         "uncovered")
    # every stored row below is parsed from bytes just compared with the journal's record
    # of its file: an altered file is refused, with no gap for one swapped in and back
    read = store.read.checked(until=point.seq)  # (as of the head it signed)
    shoes = _shoes_of(read, what)
    keys = {(str(t), str(s)) for t, s in shoes.select(*SHOE_KEY).iter_rows()}
    if not keys:
        raise InputError(f"nothing to export for {what.words()}: no shoe of the store is in "
                         "it")
    sel = Selection(shoes=frozenset(keys))
    count = int(shoes["coups"].fill_null(0).sum())
    if "pdf" in formats and count > PDF_MAX_COUPS:
        raise InputError(f"a PDF of {count:,} coups would run to ~{count // 36:,} pages; "
                         f"export at most {PDF_MAX_COUPS:,} coups with a PDF, or leave pdf "
                         "out of --format")
    with _bundle_directory(out):
        files: dict[str, dict[str, Any]] = {}

        def add(name: str, rows: int) -> None:
            files[name] = {"rows": rows, "sha256": sha256(out / name),
                           "bytes": (out / name).stat().st_size}

        stored = read.files_holding(keys)
        bar = tqdm(total=count, unit="coup", unit_scale=True, disable=not progress, desc="export")
        # The stored files' shoe digests are made beside the streamed coups (a fifth of a large
        # export's work, on the core the CSV and Parquet writers leave idle).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="file-shoes") as side:
            file_shoes = side.submit(_file_shoes, read, keys,
                                     [f for f in stored if f["table"] == "coups"])
            rows, touched = write_chunks(out / "coups.csv", out / "coups.parquet",
                                         read.chunks(sel, marked=True), csv_ready, bar.update)
            bar.close()
        if not rows:  # the slice's shoes hold no coup yet (just opened): empty tables, headed
            empty = pl.DataFrame(schema={**COUPS, MARK: pl.String})
            publish(out / "coups.parquet", empty.write_parquet)
            publish(out / "coups.csv", csv_ready(empty).write_csv)
        add("coups.parquet", rows)
        add("coups.csv", rows)
        missing = touched - keys
        if missing:  # a coup without a shoe row (cannot happen through ingest; kept honest)
            extra = pl.DataFrame(sorted(missing), schema=dict.fromkeys(SHOE_KEY, pl.String),
                                 orient="row")
            shoes = pl.concat([shoes, conform(extra, "shoes").with_columns(
                pl.lit(False).alias("open"))])
        journal = _journal_slice(store, out, keys, {t for t, _ in keys},
                                 {f["path"] for f in stored}, point.seq, logins)
        for name in ("journal.jsonl", "journal.parquet", "journal.csv"):
            add(name, journal.events)
        tables = {
            "shoes": shoes.sort(*SHOE_KEY),
            "corrections": _corrections(read, [e for e in journal.full
                                                if e.kind in ("coup_voided", "coup_amended")]),
            "file_shoes": file_shoes.result(),
        }
        for name, frame in tables.items():
            publish(out / f"{name}.parquet", frame.write_parquet)
            add(f"{name}.parquet", frame.height)
            publish(out / f"{name}.csv", csv_ready(frame).write_csv)
            add(f"{name}.csv", frame.height)
        checkpoints = [c for c in store.read.checkpoints()  # (those up to its head)
                       if c["seq"] <= point.seq]
        publish(out / CHECKPOINTS, lambda p: p.write_text(
            "".join(map(line_of, checkpoints)), encoding="utf-8"))
        add(CHECKPOINTS, len(checkpoints))
        publish(out / STORE_KEY, lambda p: p.write_bytes(store.read.public_key()))
        add(STORE_KEY, 1)
        digest = data_digest(files)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        if "xlsx" in formats:
            publish(out / "bundle.xlsx", lambda p: _xlsx(p, out, tables))
            add("bundle.xlsx", rows + journal.events + sum(f.height for f in tables.values()))
        if "pdf" in formats:
            _pdf(out, tables, what, exported_by, created, casino, digest, page_format, files)
        manifest = {
            "format": "roads-export-2",
            "software_version": __version__,
            "schema_version": SCHEMA_VERSION,
            "created_at": created,
            "exported_by": exported_by,
            "parameters": {**what.describe(), "formats": sorted({"csv", "parquet", *formats}),
                           **({"page_format": page_format} if "pdf" in formats else {}),
                           **({"logins": True} if logins else {})},
            "data_digest": digest,
            "cells": INERT_CELLS,
            "files": files,
            "store_key": hashlib.sha256(store.read.public_key()).hexdigest(),
            "journal": {
                "events": journal.events,
                "first_seq": journal.first_seq,
                "last_seq": journal.last_seq,
                "first_prev_hash": journal.first_prev_hash,
                "head": journal.head,
                "checkpoint": {"seq": point.seq, "hash": point.hash},
            },
        }
        body = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False).encode()
        publish(out / MANIFEST, lambda p: p.write_bytes(body))
        if private is not None:
            signature = private.sign(body)
            publish(out / SIGNATURE, lambda p: p.write_bytes(signature))
        # The export itself goes on the audit trail: who took what out, and which data.
        store.journal.append("data_exported", what.table_id or SYSTEM, what.shoe_id,
                             {"parameters": manifest["parameters"], "data_digest": digest,
                              "coups": rows, "signed": key_file is not None}, exported_by)
        store.sign_head()
        return manifest


def _pdf(out: Path, tables: dict[str, pl.DataFrame], what: Slice, exported_by: str,
         created: str, casino: str | None, digest: str, page_format: str,
         files: dict[str, dict[str, Any]]) -> None:
    from roads.audit.pdf import write_pdf
    from roads.stats.report import report

    coups = pl.read_parquet(out / "coups.parquet", glob=False)  # bounded: PDF_MAX_COUPS
    standing = coups.filter(pl.col(MARK).fill_null("") != "voided").drop(MARK)
    meta = {"casino": casino, "software_version": __version__,
            "schema_version": SCHEMA_VERSION, "exported_by": exported_by,
            "created_at": created, "selection": _describe(what)}
    name = f"report-{page_format.lower()}.pdf"
    publish(out / name, lambda p: write_pdf(
        p, coups=coups, shoes=tables["shoes"], corrections=tables["corrections"],
        report=report(conform(standing, "coups"), tables["shoes"]), meta=meta, digest=digest,
        page_format=page_format))
    files[name] = {"rows": coups.height, "sha256": sha256(out / name),
                   "bytes": (out / name).stat().st_size}


def _describe(what: Slice) -> str:
    parts = [f"{k} {v}" for k, v in what.describe().items()]
    return ", ".join(parts) or "the whole store"


def _private_key(path: Path) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InputError(f"{path}: the signing key must be an Ed25519 key")
    return key


def generate_keys(private: Path, public: Path) -> None:
    """A new Ed25519 key pair in PEM files (the private one readable by its owner only)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    private.chmod(0o600)
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


from roads.audit.bundle_check import BundleError, verify  # noqa: E402  (the checker of the above)

__all__ = ["BundleError", "Slice", "csv_ready", "data_digest", "export_bundle",
           "generate_keys", "sha256", "verify"]
