"""``roads verify BUNDLE``: an export bundle checked offline, with nothing but itself.

Beyond every file's digest, size and row count, the CSV against the Parquet and the hash
chain of the journal range, a bundle is checked against itself: the signed checkpoint must
sign the range's last event; every coup's shoe is in the shoes table, and each shoe row's
coup and card counts are its coups'; the corrections marked on the coups are the
corrections listed; the coups of every live shoe are exactly what the journal's
``coup_entered`` events say, with the journal's corrections applied, and its shoe row is
what its ``shoe_opened`` event says; and the coups of every stored shoe (as entered) give
the shoe digests that, with the other shoes' leaves, recompute the content digest the
journal recorded for its file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from roads.files import sha256
from roads.schema import CONTENT, COUP_KEY, COUPS, SHOE_KEY, conform
from roads.store import CORRECTION_KINDS, MARK, Event, apply_corrections, coup_row, shoe_frames
from roads.store.checkpoint import check, fingerprint, parse
from roads.store.digest import combine_leaves, shoe_digests
from roads.store.journal import FILE_KINDS, Link, verify_events

#: What a live shoe's row holds from its ``shoe_opened`` event and its coups' times (its
#: counts are checked against the listed coups, voided ones left out).
OPENED = ("rules", "decks", "burn_cards", "cut_card_index", "seed", "source", "started_at",
          "ended_at")


#: What every bundle holds (the PDF and the workbook are optional).
REQUIRED = (*(f"{t}.{f}" for t in ("coups", "shoes", "corrections", "journal", "file_shoes")
              for f in ("parquet", "csv")), "journal.jsonl", "checkpoints.jsonl",
            "store-key.pub")


class BundleError(Exception):
    """The first discrepancy found in a bundle, in plain words."""


def _load(bundle: Path) -> tuple[dict[str, Any], bytes]:
    path = bundle / "manifest.json"
    if not path.is_file():
        raise BundleError(f"{bundle}: no manifest.json — this is not an export bundle")
    body = path.read_bytes()
    try:
        manifest: dict[str, Any] = json.loads(body)
        manifest["files"], manifest["journal"]
    except (ValueError, KeyError, TypeError):
        raise BundleError("manifest.json is not a valid manifest") from None
    return manifest, body


def _files(bundle: Path, manifest: dict[str, Any]) -> None:
    files = manifest["files"]
    if not isinstance(files, dict):
        raise BundleError("manifest.json is not a valid manifest (files is not a mapping)")
    present = {p.name for p in bundle.iterdir()} - {"manifest.json", "manifest.sig"}
    for extra in sorted(present - set(files)):  # (a directory too: nothing unlisted rides along)
        raise BundleError(f"{extra} is in the bundle but not in the manifest (file added)")
    for needed in REQUIRED:
        if needed not in files:
            raise BundleError(f"{needed} is not in the bundle's manifest (file removed)")
    for name, entry in files.items():
        path = bundle / name
        if not isinstance(name, str) or Path(name).name != name or name in (".", ".."):
            raise BundleError(f"the manifest lists {name!r}, which is not a file name in "
                              "the bundle")
        if not isinstance(entry, dict) or not {"bytes", "sha256", "rows"} <= entry.keys():
            raise BundleError(f"the manifest's entry for {name} lacks its bytes, sha256 or "
                              "rows")
        if path.is_symlink() or not path.is_file():
            raise BundleError(f"{name} is listed in the manifest but missing (file deleted)")
        if path.stat().st_size != entry["bytes"]:
            raise BundleError(f"{name} has {path.stat().st_size} bytes, the manifest says "
                              f"{entry['bytes']} (file changed)")
        if sha256(path) != entry["sha256"]:
            raise BundleError(f"{name} does not match its SHA-256 in the manifest "
                              "(file changed)")


def _tables(bundle: Path, manifest: dict[str, Any]) -> dict[str, pl.DataFrame]:
    from roads.audit.bundle import csv_ready, data_digest

    files = manifest["files"]
    if "data_digest" in manifest and data_digest(files) != manifest["data_digest"]:
        raise BundleError("the data digest does not match the data files' digests "
                          "(manifest changed)")
    out = {}
    for table in ("coups", "shoes", "corrections", "journal", "file_shoes"):
        if f"{table}.parquet" not in files:
            raise BundleError(f"{table}.parquet is not in the bundle")
        parquet = pl.read_parquet(bundle / f"{table}.parquet", glob=False)
        csv = pl.read_csv(bundle / f"{table}.csv", infer_schema=False, glob=False)
        for fmt, frame in (("parquet", parquet), ("csv", csv)):
            want = files[f"{table}.{fmt}"]["rows"]
            if frame.height != want:
                raise BundleError(f"{table}.{fmt} has {frame.height} rows, the manifest says "
                                  f"{want}")
        if parquet.height and not csv_ready(parquet).cast(pl.String).equals(
                csv.cast(pl.String)):
            raise BundleError(f"{table}.csv and {table}.parquet disagree")
        out[table] = parquet
    return out


def _journal(bundle: Path, manifest: dict[str, Any]
             ) -> tuple[list[Event | Link], list[dict[str, Any]]]:
    """The journal range's events, chain checked, and its lines as read (for
    :func:`_journal_tables`)."""
    events: list[Event | Link] = []
    lines: list[dict[str, Any]] = []
    for n, line in enumerate((bundle / "journal.jsonl").read_text(encoding="utf-8")
                             .splitlines(), start=1):
        if not line:
            continue
        try:
            d = json.loads(line)
            lines.append(d)
            if d.get("redacted"):
                events.append(Link(d["seq"], d["table_id"], d["shoe_id"], d["body_sha256"],
                                   d["prev_hash"], d["hash"]))
            else:
                events.append(Event(d["seq"], d["at"], d["kind"], d["table_id"],
                                    d["shoe_id"], d["actor"], d["payload"], d["prev_hash"],
                                    d["hash"]))
        except (ValueError, KeyError, TypeError):
            raise BundleError(f"journal.jsonl line {n} is not a journal event") from None
    chain = manifest["journal"]
    if events:
        report = verify_events(events, chain["first_prev_hash"], chain["first_seq"])
        if not report.ok:
            raise BundleError(f"journal chain broken: {report.reason}")
        if report.head != chain["head"]:
            raise BundleError("the journal's last event is not the head the manifest names")
    return events, lines


def _checkpoints(bundle: Path, manifest: dict[str, Any], events: list[Event | Link]) -> None:
    """The store's signed checkpoint must sign the range's last event; every checkpoint
    inside the range must match its event."""
    pem = (bundle / "store-key.pub").read_bytes()
    if fingerprint(pem) != manifest.get("store_key"):
        raise BundleError("store-key.pub is not the store key the manifest names")
    try:
        points = parse((bundle / "checkpoints.jsonl").read_bytes(), "checkpoints.jsonl")
    except ValueError as exc:
        raise BundleError(str(exc)) from None
    if not events:
        return
    hashes = {e.seq: e.hash for e in events}
    first, last = events[0].seq, events[-1].seq
    beyond = [p for p in points if p.seq > last]
    if beyond:
        raise BundleError(f"a checkpoint of the store signed event {beyond[0].seq}, beyond the "
                          f"journal range's end (event {last}): the journal was cut")
    inside = [p for p in points if first <= p.seq <= last]
    problem = check(inside, pem, hashes.get, last)
    if problem:
        raise BundleError(f"checkpoints: {problem}")
    cut = manifest["journal"].get("checkpoint") or {}
    if not any(p.seq == last == cut.get("seq") and p.hash == hashes[last] for p in inside):
        raise BundleError("no signed checkpoint of the store signs the journal range's last "
                          "event (the range may have been cut or re-chained)")


def _consistent(t: dict[str, pl.DataFrame]) -> None:
    coups, shoes, fixes = t["coups"], t["shoes"], t["corrections"]
    known = set(shoes.select(*SHOE_KEY).iter_rows())
    for key in coups.select(*SHOE_KEY).unique().iter_rows():
        if key not in known:
            raise BundleError(f"coups of shoe {key[0]}/{key[1]} are listed, but the shoe is "
                              "not in shoes")
    if "open" not in shoes.columns:
        raise BundleError("the shoes table does not say which shoes are open")
    last: dict[tuple[Any, ...], str] = {}
    for r in fixes.sort("seq").iter_rows(named=True):
        key = (r["table_id"], r["shoe_id"], r["coup"])
        last[key] = "voided" if r["kind"] == "coup_voided" else last.get(key, "amended")
    for r in coups.select(*COUP_KEY, MARK).iter_rows(named=True):
        mark = r[MARK]
        want = last.get((r["table_id"], r["shoe_id"], r["coup"]))
        if mark != want:
            raise BundleError(f"coup {r['coup']} of {r['table_id']}/{r['shoe_id']} is marked "
                              f"{mark or 'as entered'}, the corrections say {want or 'none'}")


def _shoe_counts(t: dict[str, pl.DataFrame]) -> None:
    """Each shoe row's ``coups`` and ``cards_dealt`` are its listed coups', voided ones left
    out (a voided double entry was never dealt): otherwise an imported shoe's row would be
    recomputed from nothing in the bundle."""
    dealt = t["coups"].filter(pl.col(MARK).is_null() | (pl.col(MARK) != "voided"))
    cards = pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()
    counted = dealt.group_by(*SHOE_KEY).agg(
        pl.len().alias("_coups"),
        pl.when(pl.col("player_cards").is_not_null().all()).then(cards.sum()).alias("_cards"))
    rows = t["shoes"].select(*SHOE_KEY, "coups", "cards_dealt").join(
        counted, on=list(SHOE_KEY), how="left").with_columns(pl.col("_coups").fill_null(0))
    for r in rows.iter_rows(named=True):
        for field, listed in (("coups", r["_coups"]), ("cards_dealt", r["_cards"])):
            said = r[field]
            if said is not None and said != listed:
                gives = "no card count (a coup without cards)" if listed is None else listed
                raise BundleError(f"shoe {r['table_id']}/{r['shoe_id']}: its row says {field} "
                                  f"{said}, its coups give {gives}")


def _live_shoes(t: dict[str, pl.DataFrame], events: list[Event | Link]) -> None:
    """Each shoe the journal range opened: its coups exactly as its events entered them,
    with its corrections applied."""
    full = [e for e in events if isinstance(e, Event)]
    opened = {(e.table_id, e.shoe_id or "") for e in full if e.kind == "shoe_opened"}
    coups = conform(t["coups"], "coups").with_columns(t["coups"][MARK])
    shoes = conform(t["shoes"].drop("open"), "shoes")
    for key in sorted(opened):
        mine = [e for e in full if (e.table_id, e.shoe_id) == key]
        entered, journaled = shoe_frames(mine)
        row = shoes.filter((pl.col("table_id") == key[0]) & (pl.col("shoe_id") == key[1]))
        if row.height and not row.select(OPENED).equals(journaled.select(OPENED)):
            raise BundleError(f"the shoe row of live shoe {key[0]}/{key[1]} is not the one "
                              "its shoe_opened event and coups give")
        expected = apply_corrections(entered, mine, marked=True).sort("coup")
        listed = coups.filter((pl.col("table_id") == key[0]) & (pl.col("shoe_id") == key[1])
                              ).sort("coup")
        columns = [*COUP_KEY, *CONTENT, "dealt_at", "entered_by", MARK]
        if not expected.select(columns).equals(listed.select(columns)):
            raise BundleError(f"the coups of live shoe {key[0]}/{key[1]} are not the coups "
                              "its journal events entered")


def _journal_tables(lines: list[dict[str, Any]], t: dict[str, pl.DataFrame]) -> None:
    """``journal.parquet`` (and so its CSV twin) holds exactly ``journal.jsonl``'s lines: the
    chain is checked on the JSON lines, so a table saying another actor or payload would
    go unchecked."""
    from roads.audit.bundle import JOURNAL, journal_frame

    if not journal_frame(lines).equals(conform_to(t["journal"], JOURNAL)):
        raise BundleError("journal.parquet and journal.csv do not hold the events of "
                          "journal.jsonl")


def conform_to(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """``frame`` with exactly ``schema``'s columns, in its order and types."""
    missing = set(schema) - set(frame.columns)
    if missing:
        raise BundleError(f"a table lacks the column(s) {', '.join(sorted(missing))}")
    return frame.select(pl.col(c).cast(d) for c, d in schema.items())


def _corrections_listed(t: dict[str, pl.DataFrame], events: list[Event | Link]) -> None:
    """The corrections table is the journal's voids and amendments of the bundle's shoes,
    row for row: who asked, who approved, why, which coup, the values it set (a live
    shoe's coup as entered too). The table is what a reader looks at; the events are what
    the chain and the checkpoints vouch for."""
    from roads.audit.bundle import CORRECTIONS, content_cells

    shoes = set(t["shoes"].select(*SHOE_KEY).iter_rows())
    fixes = [e for e in events if isinstance(e, Event) and e.kind in CORRECTION_KINDS
             and (e.table_id, e.shoe_id) in shoes]
    listed = conform_to(t["corrections"], CORRECTIONS).sort("seq")
    if listed.height != len(fixes):
        raise BundleError(f"the corrections table lists {listed.height} correction(s), the "
                          f"journal holds {len(fixes)} for the bundle's shoes")
    full = [e for e in events if isinstance(e, Event)]
    entered = {(e.table_id, e.shoe_id, e.payload.get("coup")): e for e in full
               if e.kind == "coup_entered"}
    opened = {(e.table_id, e.shoe_id) for e in full if e.kind == "shoe_opened"}
    for e, row in zip(sorted(fixes, key=lambda e: e.seq), listed.iter_rows(named=True),
                      strict=True):
        original = {c: row[f"original_{c}"] for c in CONTENT}
        if (e.table_id, e.shoe_id) in opened:  # a live shoe: its coup as its event entered it
            coup = entered.get((e.table_id, e.shoe_id, e.payload.get("coup")))
            original = content_cells(coup_row(coup) if coup else None)
        new = e.payload.get("new", {}) if e.kind == "coup_amended" else None
        amended = None if new is None else {
            **original, **{c: v for c, v in content_cells(new).items() if c in new}}
        want = {"seq": e.seq, "at": e.at, "kind": e.kind, "table_id": e.table_id,
                "shoe_id": e.shoe_id, "coup": e.payload.get("coup"), "requested_by": e.actor,
                "approved_by": e.payload.get("approver"), "reason": e.payload.get("reason"),
                "request": e.payload.get("request"),
                **{f"original_{c}": v for c, v in original.items()},
                **{f"amended_{c}": None if amended is None else amended[c] for c in CONTENT}}
        if pl.DataFrame([want], schema=CORRECTIONS).row(0, named=True) != row:
            raise BundleError(f"the corrections table's row for journal event {e.seq} is not "
                              f"what that {e.kind} event says")


def _as_entered(t: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The bundle's coups as entered: amended values put back from the corrections table."""
    coups = conform(t["coups"], "coups")
    fixes = t["corrections"].filter(pl.col("kind") == "coup_amended").sort("seq")
    if fixes.is_empty():
        return coups
    first = fixes.unique([*COUP_KEY], keep="first", maintain_order=True)
    originals = first.select(*COUP_KEY, *(
        (pl.col(f"original_{c}").str.split(" ").cast(COUPS[c]) if c.endswith("_cards") else
         pl.col(f"original_{c}").cast(COUPS[c])).alias(c) for c in CONTENT))
    rest = coups.join(originals.select(*COUP_KEY), on=list(COUP_KEY), how="anti")
    amended = coups.join(originals.select(*COUP_KEY), on=list(COUP_KEY), how="semi")
    restored = amended.drop(*CONTENT).join(originals, on=list(COUP_KEY), how="left")
    return pl.concat([rest, conform(restored, "coups")])


def coup_ranges(numbers: list[int]) -> str:
    """Sorted coup numbers as ranges ("1-20 41-60"): which of a shoe's coups one file holds
    (a shoe imported in parts is in several files)."""
    out: list[str] = []
    start = prev = None
    for n in [*numbers, None]:
        if n is not None and prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = n
    return " ".join(out)


def coup_ranges_by_shoe(coups: pl.DataFrame) -> dict[tuple[str, str], str]:
    """Each shoe's :func:`coup_ranges`: from its lowest and highest coup when every number
    between is there once (the usual shoe: no list of numbers per shoe, a sixth of a large
    export's time), else from its sorted numbers."""
    coup = pl.col("coup").cast(pl.Int64)
    spans = coups.group_by(*SHOE_KEY).agg(lo=coup.min(), hi=coup.max(), n=pl.len(),
                                          unique=coup.n_unique())
    whole = spans.filter(pl.col("hi") - pl.col("lo") + 1 == pl.col("n"),
                         pl.col("n") == pl.col("unique"))
    out = {(t, s): str(lo) if lo == hi else f"{lo}-{hi}"
           for t, s, lo, hi in whole.select(*SHOE_KEY, "lo", "hi").iter_rows()}
    if whole.height < spans.height:
        rest = coups.join(whole.select(*SHOE_KEY), on=list(SHOE_KEY), how="anti")
        out.update({(t, s): coup_ranges(numbers) for t, s, numbers in rest.group_by(
            *SHOE_KEY).agg(pl.col("coup").sort()).iter_rows()})
    return out


def coup_numbers(ranges: str) -> list[int]:
    """The coup numbers :func:`coup_ranges` wrote; anything else (a hostile bundle) is a
    :class:`BundleError`, never a traceback or a range too large to hold."""
    out: list[int] = []
    for part in ranges.split():
        found = _RANGE.fullmatch(part)
        first = int(found[1]) if found else 0
        last = int(found[2] or found[1]) if found else 0
        if not found or not 1 <= first <= last or len(out) + last - first >= MAX_COUPS_LISTED:
            raise BundleError(f"file_shoes: {ranges[:40]!r} is not a list of coup ranges")
        out.extend(range(first, last + 1))
    return out


_RANGE = re.compile(r"(\d{1,5})(?:-(\d{1,5}))?")
#: More coups than any shoe holds (the schema's coup column is 16-bit).
MAX_COUPS_LISTED = 32_768


def _stored_shoes(t: dict[str, pl.DataFrame], events: list[Event | Link]) -> None:
    """Each stored file's leaves recompute the content digest its journal event recorded;
    each of the slice's shoes in it gives, as entered, the digest listed for it."""
    recorded: dict[str, str] = {}
    for e in events:
        if isinstance(e, Event) and e.kind in FILE_KINDS:
            for f in e.payload.get("files", []):
                recorded[f["path"]] = f["content"]
    listing = t["file_shoes"].sort("path", "position")
    if listing.is_empty():
        return
    entered = _as_entered(t)
    digests = shoe_digests(entered)
    mine = {(r[0], r[1]): r[2] for r in digests.iter_rows()}
    named = listing.filter(pl.col("table_id").is_not_null())
    in_parts = set(named.filter(pl.struct("table_id", "shoe_id").is_duplicated())
                   .select("table_id", "shoe_id").iter_rows())

    def part_digest(r: dict[str, Any]) -> str | None:
        """The digest of the coups of a shoe imported in parts that this file holds."""
        part = entered.filter((pl.col("table_id") == r["table_id"])
                              & (pl.col("shoe_id") == r["shoe_id"])
                              & pl.col("coup").is_in(coup_numbers(r["coups"] or "")))
        found = shoe_digests(part)
        return str(found["digest"][0]) if found.height else None

    for (path,), rows in listing.group_by("path", maintain_order=True):
        if path not in recorded:
            raise BundleError(f"no journal event of the bundle records the file {path}")
        if combine_leaves(rows["leaf"].to_list()) != recorded[path]:
            raise BundleError(f"the shoe digests listed for {path} do not give the content "
                              "digest its journal event recorded")
        for r in rows.filter(pl.col("table_id").is_not_null()).iter_rows(named=True):
            key = (r["table_id"], r["shoe_id"])
            if (part_digest(r) if key in in_parts else mine.get(key)) != r["digest"]:
                raise BundleError(f"the coups of shoe {r['table_id']}/{r['shoe_id']} are not "
                                  f"the coups stored in {path} (their digest differs)")


def verify(bundle: Path, public_key: Path | None = None) -> dict[str, Any]:
    """Check a bundle; raises :class:`BundleError` at the first discrepancy. A bundle is
    hostile input: anything it holds that cannot be read as a bundle is a discrepancy too,
    named in one line, never a traceback."""
    try:
        return _verify(bundle, public_key)
    except BundleError:
        raise
    except (OSError, KeyError, TypeError, ValueError, AttributeError, IndexError,
            RecursionError, pl.exceptions.PolarsError, pa.ArrowException) as exc:
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        raise BundleError(f"the bundle cannot be read as a bundle ({type(exc).__name__}"
                          + (f": {detail}" if detail else "") + ")") from None


def _verify(bundle: Path, public_key: Path | None) -> dict[str, Any]:
    manifest, body = _load(bundle)
    _check_signature(bundle, body, public_key)
    _files(bundle, manifest)
    tables = _tables(bundle, manifest)
    events, lines = _journal(bundle, manifest)
    _checkpoints(bundle, manifest, events)
    _consistent(tables)
    _journal_tables(lines, tables)
    _corrections_listed(tables, events)
    _shoe_counts(tables)
    _live_shoes(tables, events)
    _stored_shoes(tables, events)
    return manifest


def _check_signature(bundle: Path, body: bytes, public_key: Path | None) -> None:
    signed = (bundle / "manifest.sig").is_file()
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
        key.verify((bundle / "manifest.sig").read_bytes(), body)
    except InvalidSignature:
        raise BundleError("the manifest's signature does not match this public key "
                          "(manifest changed, or signed with another key)") from None
