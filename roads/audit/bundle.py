"""Export bundles a regulator can check offline, years later, with one command.

A bundle is a directory of open formats: the coups (corrections applied), the shoes, every
correction with its original and amended values, and the journal events covering them (a
contiguous run, so the hash chain can be re-walked), each table as CSV and Parquet, plus
``manifest.json`` (every file's SHA-256, size and row count, the journal range and head,
the export parameters) and optionally ``manifest.sig``, an Ed25519 signature of the
manifest's bytes. :func:`verify` needs nothing but the bundle (and the public key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from roads import __version__
from roads.errors import InputError
from roads.files import publish, sha256
from roads.schema import SCHEMA_VERSION
from roads.store.journal import Event, verify_events
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


def _csv_ready(frame: pl.DataFrame) -> pl.DataFrame:
    """Lists of cards as space-separated codes, times as ISO 8601: plain, portable CSV."""
    out = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if isinstance(dtype, pl.List):
            out.append(col.cast(pl.List(pl.String)).list.join(" ").alias(name))
        elif isinstance(dtype, pl.Datetime):
            out.append(col.dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ").alias(name))
        elif isinstance(dtype, pl.Enum | pl.Categorical):
            out.append(col.cast(pl.String))
        else:
            out.append(col)
    return frame.select(out)


def _select(store: Store, what: Slice) -> pl.DataFrame:
    coups = store.read_coups(what.table_id, what.shoe_id)
    day = pl.col("dealt_at").dt.date()
    if what.day is not None:
        coups = coups.filter(day == what.day)
    if what.start is not None:
        coups = coups.filter(day >= what.start)
    if what.end is not None:
        coups = coups.filter(day <= what.end)
    return coups


def _corrections(events: list[Event], originals: pl.DataFrame) -> pl.DataFrame:
    """Every void and amendment, with the coup as entered beside the corrected values."""
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


def export_bundle(store: Store, what: Slice, out: Path, exported_by: str,
                  key_file: Path | None = None) -> dict[str, Any]:
    """Write the bundle for ``what`` into ``out`` (which must not exist or be empty)."""
    if out.exists() and any(out.iterdir()):
        raise InputError(f"{out}: the bundle directory must be new or empty")
    out.mkdir(parents=True, exist_ok=True)
    coups = _select(store, what)
    if coups.is_empty():
        raise InputError(f"nothing to export for {what.describe() or 'the whole store'}")
    keys = coups.select("table_id", "shoe_id").unique()
    shoes = store.read_shoes().join(keys, on=["table_id", "shoe_id"], how="semi")
    originals = store.read_coups(what.table_id, what.shoe_id, originals=True).join(
        keys, on=["table_id", "shoe_id"], how="semi")
    touched = {(t, s) for t, s in keys.iter_rows()}
    all_events = store.journal.events()
    mine = [e for e in all_events if (e.table_id, e.shoe_id) in touched]
    if mine:  # the contiguous run covering them, so the chain can be walked offline
        lo, hi = mine[0].seq, mine[-1].seq
        journal = [e for e in all_events if lo <= e.seq <= hi]
    else:
        journal = []
    tables = {
        "coups": coups.sort("table_id", "shoe_id", "coup"),
        "shoes": shoes.sort("table_id", "shoe_id"),
        "corrections": _corrections(mine, originals),
    }
    files: dict[str, dict[str, Any]] = {}
    for name, frame in tables.items():
        publish(out / f"{name}.parquet", frame.write_parquet)
        publish(out / f"{name}.csv", _csv_ready(frame).write_csv)
        for suffix in ("parquet", "csv"):
            files[f"{name}.{suffix}"] = {"rows": frame.height}
    publish(out / "journal.jsonl", lambda p: p.write_text(
        "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in journal),
        encoding="utf-8"))
    files["journal.jsonl"] = {"rows": len(journal)}
    for name, entry in files.items():
        entry["sha256"] = sha256(out / name)
        entry["bytes"] = (out / name).stat().st_size
    manifest = {
        "format": "roads-export-1",
        "software_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "exported_by": exported_by,
        "parameters": what.describe(),
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
    return manifest


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
    for table in ("coups", "shoes", "corrections"):
        parquet = pl.read_parquet(bundle / f"{table}.parquet")
        csv = pl.read_csv(bundle / f"{table}.csv", infer_schema=False)
        for fmt, frame in (("parquet", parquet), ("csv", csv)):
            want = files[f"{table}.{fmt}"]["rows"]
            if frame.height != want:
                raise BundleError(f"{table}.{fmt} has {frame.height} rows, the manifest says "
                                  f"{want}")
        if not _csv_ready(parquet).cast(pl.String).equals(csv.cast(pl.String)):
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
