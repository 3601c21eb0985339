"""Export bundles a regulator can check offline, years later, with one command.

A bundle is a directory of open formats: the coups (corrections applied), the shoes, every
correction with its original and amended values, and the journal events covering them (a
contiguous run, so the hash chain can be re-walked), each table as CSV and Parquet, plus
``manifest.json`` (every file's SHA-256, size and row count, the journal range and head,
the export parameters) and optionally ``manifest.sig``, an Ed25519 signature of the
manifest's bytes. :func:`verify` needs nothing but the bundle (and the public key).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
from tqdm import tqdm

from roads import __version__
from roads.audit.stream import coup_chunks, write_chunks
from roads.errors import InputError
from roads.files import publish, sha256
from roads.schema import SCHEMA_VERSION
from roads.store.journal import SYSTEM, Event, canonical, verify_events
from roads.store.store import Store

MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
CORRECTIONS: dict[str, pl.DataType] = {
    "seq": pl.Int64(), "at": pl.String(), "kind": pl.String(), "table_id": pl.String(),
    "shoe_id": pl.String(), "coup": pl.Int32(), "operator": pl.String(),
    "approver": pl.String(), "reason": pl.String(), "original_outcome": pl.String(),
    "original_player_cards": pl.String(), "original_banker_cards": pl.String(),
    "amended_outcome": pl.String(), "amended_player_cards": pl.String(),
    "amended_banker_cards": pl.String(),
}


@dataclass(frozen=True)
class Slice:
    """What to export: one shoe, a table-day, or a date range (of one table or all)."""

    table_id: str | None = None
    shoe_id: str | None = None
    day: date | None = None
    start: date | None = None
    end: date | None = None

    def describe(self) -> dict[str, Any]:
        return {k: (v.isoformat() if isinstance(v, date) else v)
                for k, v in self.__dict__.items() if v is not None}


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


def _csv_ready(frame: pl.DataFrame, inert: bool = True) -> pl.DataFrame:
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


def _corrections(events: list[Event], store: Store, what: Slice) -> pl.DataFrame:
    """Every void and amendment, with the coup as entered beside the corrected values.

    Only the corrected coups' originals are read into Python (an export of a million coups
    has a handful of corrections)."""
    fixes = [e for e in events if e.kind in ("coup_voided", "coup_amended")]
    if not fixes:
        return pl.DataFrame(schema=CORRECTIONS)
    keys = pl.DataFrame([(e.table_id, e.shoe_id, int(e.payload["coup"])) for e in fixes],
                        schema={"table_id": pl.String, "shoe_id": pl.String,
                                "coup": pl.Int32}, orient="row").unique()
    originals = store.read_coups(what.table_id, what.shoe_id, originals=True).join(
        keys, on=["table_id", "shoe_id", "coup"], how="semi")
    first = {(r["table_id"], r["shoe_id"], r["coup"]): r for r in originals.to_dicts()}

    def cards(value: Any) -> str | None:
        return " ".join(value) if value else None

    rows = []
    for e in events:
        if e.kind not in ("coup_voided", "coup_amended"):
            continue
        key = (e.table_id, e.shoe_id, e.payload["coup"])
        original = first.get(key, {})
        new = e.payload.get("new") or {}
        rows.append({
            "seq": e.seq, "at": e.at, "kind": e.kind, "table_id": e.table_id,
            "shoe_id": e.shoe_id, "coup": e.payload["coup"], "operator": e.actor,
            "approver": e.payload.get("approver"), "reason": e.payload.get("reason"),
            "original_outcome": str(original["outcome"]) if original else None,
            "original_player_cards": cards(original.get("player_cards")),
            "original_banker_cards": cards(original.get("banker_cards")),
            "amended_outcome": new.get("outcome"),
            "amended_player_cards": cards(new.get("player_cards")),
            "amended_banker_cards": cards(new.get("banker_cards")),
        })
    return pl.DataFrame(rows, schema=CORRECTIONS)


FORMATS = ("pdf", "csv", "parquet", "xlsx")
PDF_MAX_COUPS = 50_000
#: Files whose digests make up the data digest printed on every PDF page.
DATA_FILES = (*(f"{t}.{x}" for t in ("coups", "shoes", "corrections", "journal")
                for x in ("parquet", "csv")), "journal.jsonl")
JOURNAL: dict[str, pl.DataType] = {
    "seq": pl.Int64(), "at": pl.String(), "kind": pl.String(), "table_id": pl.String(),
    "shoe_id": pl.String(), "actor": pl.String(), "payload": pl.String(),
    "prev_hash": pl.String(), "hash": pl.String()}


def data_digest(files: dict[str, dict[str, Any]]) -> str:
    """SHA-256 over the data files' names and digests: one number that names the data."""
    body = "".join(f"{name} {files[name]['sha256']}\n" for name in sorted(files)
                   if name in DATA_FILES)
    return hashlib.sha256(body.encode()).hexdigest()


def _journal_frame(journal: list[Event]) -> pl.DataFrame:
    return pl.DataFrame([{**e.to_json(), "payload": canonical(e.payload)} for e in journal],
                        schema=JOURNAL)


def _xlsx(path: Path, coups: Path, tables: dict[str, pl.DataFrame]) -> None:
    """One workbook, one sheet per table, the coups streamed from their Parquet file one
    row group at a time (split at Excel's 1,048,575 data rows a sheet). Cells are the CSV's
    (formulas escaped) and xlsxwriter turns no string into a formula or a link."""
    import pyarrow.parquet as pq
    import xlsxwriter

    limit = 1_048_575

    def frames() -> Iterator[tuple[str, pl.DataFrame]]:
        # Row group by row group: pyarrow cannot stream batches of list-of-dictionary
        # columns across row groups ("nested data conversions not implemented for chunked
        # array outputs"); a row group is one written chunk, so memory stays bounded.
        parquet = pq.ParquetFile(coups)
        for group in range(parquet.num_row_groups):
            chunk = pl.from_arrow(parquet.read_row_group(group))
            yield "coups", _csv_ready(chunk)  # type: ignore[arg-type]
        for name, frame in tables.items():
            yield name, _csv_ready(frame)

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


def _check_pdf_size(store: Store, what: Slice, events: list[Event]) -> None:
    """A PDF lists every coup: refuse one that would run to thousands of pages."""
    count = sum(c.height for c in coup_chunks(store, events, what.table_id, what.shoe_id,
                                              what.day, what.start, what.end))
    if count > PDF_MAX_COUPS:
        raise InputError(f"a PDF of {count:,} coups would run to ~{count // 36:,} pages; "
                         f"export at most {PDF_MAX_COUPS:,} coups with a PDF, or leave pdf "
                         "out of --format")


def export_bundle(store: Store, what: Slice, out: Path, exported_by: str,
                  key_file: Path | None = None, formats: tuple[str, ...] = (),
                  page_format: str = "A4", casino: str | None = None,
                  progress: bool = False) -> dict[str, Any]:
    """Write the bundle for ``what`` into ``out`` (which must not exist or be empty).

    CSV and Parquet of every table are always written (they are what ``verify`` checks
    against each other); ``formats`` adds ``pdf`` and/or ``xlsx``.
    """
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise InputError(f"unknown export format(s) {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(FORMATS)}")
    if page_format not in ("A4", "Letter"):
        raise InputError(f"page format must be A4 or Letter (got {page_format!r})")
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out}: the bundle directory must be new or empty")
    out.mkdir(parents=True, exist_ok=True)
    bar = tqdm(unit="coup", unit_scale=True, disable=not progress, desc="export")
    events = store.journal.events(what.table_id, what.shoe_id)
    if "pdf" in formats:
        _check_pdf_size(store, what, events)
    files: dict[str, dict[str, Any]] = {}

    def add(name: str, rows: int) -> None:
        files[name] = {"rows": rows, "sha256": sha256(out / name),
                       "bytes": (out / name).stat().st_size}

    # The coups stream (bounded memory); the other tables are small.
    rows, touched = write_chunks(
        out / "coups.csv", out / "coups.parquet",
        coup_chunks(store, events, what.table_id, what.shoe_id, what.day, what.start,
                    what.end), _csv_ready, bar.update)
    if not rows:
        raise InputError(f"nothing to export for {what.describe() or 'the whole store'}")
    add("coups.parquet", rows)
    add("coups.csv", rows)
    keys = pl.DataFrame(sorted(touched), schema={"table_id": pl.String, "shoe_id": pl.String},
                        orient="row")
    shoes = store.read_shoes().join(keys, on=["table_id", "shoe_id"], how="semi")
    all_events = store.journal.events()
    mine = [e for e in all_events if (e.table_id, e.shoe_id) in touched]
    if mine:  # the contiguous run covering them, so the chain can be walked offline
        lo, hi = mine[0].seq, mine[-1].seq
        journal = [e for e in all_events if lo <= e.seq <= hi]
    else:
        journal = []
    tables = {
        "shoes": shoes.sort("table_id", "shoe_id"),
        "corrections": _corrections(mine, store, what),
        "journal": _journal_frame(journal),
    }
    for name, frame in tables.items():
        publish(out / f"{name}.parquet", frame.write_parquet)
        add(f"{name}.parquet", frame.height)
        publish(out / f"{name}.csv", _csv_ready(frame).write_csv)
        add(f"{name}.csv", frame.height)
    publish(out / "journal.jsonl", lambda p: p.write_text(
        "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in journal),
        encoding="utf-8"))
    add("journal.jsonl", len(journal))
    digest = data_digest(files)
    created = datetime.now(UTC).isoformat(timespec="seconds")
    if "xlsx" in formats:
        publish(out / "bundle.xlsx", lambda p: _xlsx(p, out / "coups.parquet", tables))
        add("bundle.xlsx", rows + sum(f.height for f in tables.values()))
    if "pdf" in formats:
        coups = pl.read_parquet(out / "coups.parquet")  # bounded by _check_pdf_size
        from roads.audit.pdf import write_pdf
        from roads.stats.report import report

        meta = {"casino": casino, "software_version": __version__,
                "schema_version": SCHEMA_VERSION, "exported_by": exported_by,
                "created_at": created, "selection": _describe(what)}
        name = f"report-{page_format.lower()}.pdf"
        publish(out / name, lambda p: write_pdf(
            p, coups=coups, shoes=tables["shoes"],
            corrections=tables["corrections"], report=report(coups, tables["shoes"]),
            meta=meta, digest=digest, page_format=page_format, progress=bar.update))
        add(name, coups.height)
    bar.close()
    manifest = {
        "format": "roads-export-1",
        "software_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "created_at": created,
        "exported_by": exported_by,
        "parameters": {**what.describe(), "formats": sorted({"csv", "parquet", *formats}),
                       **({"page_format": page_format} if "pdf" in formats else {})},
        "data_digest": digest,
        "cells": INERT_CELLS,
        "files": files,
        "journal": {
            "events": len(journal),
            "first_seq": journal[0].seq if journal else None,
            "last_seq": journal[-1].seq if journal else None,
            "first_prev_hash": journal[0].prev_hash if journal else None,
            "head": journal[-1].hash if journal else None,
        },
    }
    body = json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False).encode()
    publish(out / MANIFEST, lambda p: p.write_bytes(body))
    if key_file is not None:
        signature = _private_key(key_file).sign(body)
        publish(out / SIGNATURE, lambda p: p.write_bytes(signature))
    # The export itself goes on the audit trail: who took what out, and which data.
    store.journal.append("data_exported", what.table_id or SYSTEM, what.shoe_id,
                         {"parameters": manifest["parameters"], "data_digest": digest,
                          "coups": rows, "signed": key_file is not None}, exported_by)
    return manifest


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


class BundleError(Exception):
    """The first discrepancy found in a bundle, in plain words."""


def verify(bundle: Path, public_key: Path | None = None) -> dict[str, Any]:
    """Check a bundle; raises :class:`BundleError` at the first discrepancy."""
    manifest_path = bundle / MANIFEST
    if not manifest_path.is_file():
        raise BundleError(f"{bundle}: no {MANIFEST} — this is not an export bundle")
    body = manifest_path.read_bytes()
    try:
        manifest: dict[str, Any] = json.loads(body)
        files = manifest["files"]
        chain = manifest["journal"]
    except (ValueError, KeyError, TypeError):
        raise BundleError(f"{MANIFEST} is not a valid manifest") from None
    _check_signature(bundle, body, public_key)
    present = {p.name for p in bundle.iterdir() if p.is_file()} - {MANIFEST, SIGNATURE}
    for extra in sorted(present - set(files)):
        raise BundleError(f"{extra} is in the bundle but not in the manifest (file added)")
    for name, entry in files.items():
        path = bundle / name
        if not path.is_file():
            raise BundleError(f"{name} is listed in the manifest but missing (file deleted)")
        if path.stat().st_size != entry["bytes"]:
            raise BundleError(f"{name} has {path.stat().st_size} bytes, the manifest says "
                              f"{entry['bytes']} (file changed)")
        if sha256(path) != entry["sha256"]:
            raise BundleError(f"{name} does not match its SHA-256 in the manifest "
                              "(file changed)")
    if "data_digest" in manifest and data_digest(files) != manifest["data_digest"]:
        raise BundleError("the data digest does not match the data files' digests "
                          "(manifest changed)")
    for table in ("coups", "shoes", "corrections", "journal"):
        if f"{table}.parquet" not in files:
            continue  # bundles written before the journal was exported as a table
        parquet = pl.read_parquet(bundle / f"{table}.parquet")
        csv = pl.read_csv(bundle / f"{table}.csv", infer_schema=False)
        for fmt, frame in (("parquet", parquet), ("csv", csv)):
            want = files[f"{table}.{fmt}"]["rows"]
            if frame.height != want:
                raise BundleError(f"{table}.{fmt} has {frame.height} rows, the manifest says "
                                  f"{want}")
        inert = manifest.get("cells") == INERT_CELLS
        if not _csv_ready(parquet, inert).cast(pl.String).equals(csv.cast(pl.String)):
            raise BundleError(f"{table}.csv and {table}.parquet disagree")
    events = [_event(line) for line in
              (bundle / "journal.jsonl").read_text(encoding="utf-8").splitlines() if line]
    if events:
        report = verify_events(events, chain["first_prev_hash"], chain["first_seq"])
        if not report.ok:
            raise BundleError(f"journal chain broken: {report.reason}")
        if report.head != chain["head"]:
            raise BundleError("the journal's last event is not the head the manifest names")
    return manifest


def _event(line: str) -> Event:
    data = json.loads(line)
    return Event(data["seq"], data["at"], data["kind"], data["table_id"], data["shoe_id"],
                 data["actor"], data["payload"], data["prev_hash"], data["hash"])


def _check_signature(bundle: Path, body: bytes, public_key: Path | None) -> None:
    signed = (bundle / SIGNATURE).is_file()
    if public_key is None:
        if signed:
            raise BundleError("the bundle is signed: give --pubkey to check the signature")
        return
    if not signed:
        raise BundleError("the bundle is not signed, but a public key was given")
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(public_key.read_bytes())
    except (OSError, ValueError) as exc:
        raise BundleError(f"{public_key}: not a readable PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BundleError(f"{public_key}: not an Ed25519 public key")
    try:
        key.verify((bundle / SIGNATURE).read_bytes(), body)
    except InvalidSignature:
        raise BundleError("the manifest's signature does not match this public key "
                          "(manifest changed, or signed with another key)") from None


__all__ = ["BundleError", "Slice", "export_bundle", "generate_keys", "sha256", "verify"]
