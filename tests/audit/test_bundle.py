"""Export bundles: verifiable offline; any change, addition or deletion is caught."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import roads.audit.bundle as bundle_module
from roads.audit.bundle import (
    BundleError,
    Slice,
    data_digest,
    export_bundle,
    generate_keys,
    sha256,
    verify,
)
from roads.audit.bundle_check import coup_numbers, coup_ranges, coup_ranges_by_shoe
from roads.errors import InputError
from roads.ingest.entry import CoupEntry
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store
from tests.floor import Floor


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    floor = Floor(tmp_path_factory.mktemp("store"))
    floor.open_shoe("T1", "S1", burn_cards=["3h", "Kd", "2c", "9s"])
    floor.coups("T1", "BBPT")
    floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    floor.amend("T1", "S1", 2, CoupEntry(outcome="P", method="keypad"), "keyed wrong")
    floor.void("T1", "S1", 4, "double entry")
    floor.close("T1")
    return floor.store


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("keys")
    generate_keys(root / "private.pem", root / "public.pem")
    return root / "private.pem", root / "public.pem"


def bundle_of(store: Store, tmp_path: Path, key: Path | None = None) -> Path:
    out = tmp_path / "bundle"
    export_bundle(store, Slice(table_id="T1", shoe_id="S1"), out, "auditor", key)
    return out


def test_bundle_contents_and_verification(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    manifest = verify(out)
    assert manifest["parameters"] == {"table_id": "T1", "shoe_id": "S1",
                                      "formats": ["csv", "parquet"]}
    assert manifest["files"]["coups.parquet"]["rows"] == 5  # five entered, one voided: kept
    coups = pl.read_parquet(out / "coups.parquet")
    assert "".join(coups["outcome"].cast(pl.String)) == "BPPTP"
    assert coups["correction"].to_list() == [None, "amended", None, "voided", None]
    assert coups["entry"].cast(pl.String).to_list() == ["keypad"] * 4 + ["cards"]
    assert coups["entered_by"].to_list() == ["dealer"] * 5
    corrections = pl.read_csv(out / "corrections.csv")
    assert corrections.select("kind", "coup", "original_outcome", "amended_outcome",
                              "requested_by", "approved_by", "reason").rows() == [
        ("coup_amended", 2, "B", "P", "dealer", "super", "keyed wrong"),
        ("coup_voided", 4, "T", None, "dealer", "super", "double entry")]
    shoes = pl.read_parquet(out / "shoes.parquet")
    assert shoes.select("table_id", "shoe_id", "open").rows() == [("T1", "S1", False)]
    assert manifest["journal"]["events"] == len((out / "journal.jsonl").read_text()
                                                .splitlines())


@pytest.mark.parametrize("name", ["coups.csv", "coups.parquet", "shoes.csv", "corrections.csv",
                                  "journal.jsonl", "journal.csv", "journal.parquet"])
def test_changing_any_byte_of_any_file_fails(store: Store, tmp_path: Path, name: str) -> None:
    out = bundle_of(store, tmp_path)
    data = bytearray((out / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (out / name).write_bytes(bytes(data))
    with pytest.raises(BundleError, match=re.escape(name) + " does not match its SHA-256"):
        verify(out)


def test_deleting_or_adding_a_file_fails(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    (out / "shoes.csv").unlink()
    with pytest.raises(BundleError, match=r"shoes\.csv is listed in the manifest but missing"):
        verify(out)
    shutil.rmtree(out)
    out = bundle_of(store, tmp_path)
    (out / "notes.txt").write_text("added later")
    with pytest.raises(BundleError, match=r"notes\.txt is in the bundle but not in the manifest"):
        verify(out)


def test_a_directory_added_to_a_bundle_fails(store: Store, tmp_path: Path) -> None:
    """Only the files the manifest lists may be in a bundle: a directory added later (with a
    forged table in it) is not skipped as "not a file"."""
    out = bundle_of(store, tmp_path)
    (out / "extra").mkdir()
    (out / "extra" / "coups.csv").write_text("forged\n")
    with pytest.raises(BundleError, match=r"extra is in the bundle but not in the manifest"):
        verify(out)


def _manifest(out: Path, change: Callable[[dict[str, Any]], None]) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    change(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))


def _drop(out: Path, name: str) -> None:
    (out / name).unlink()

    def unlisted(m: dict[str, Any]) -> None:
        del m["files"][name]
        m["data_digest"] = data_digest(m["files"])
    _manifest(out, unlisted)


def _deep(out: Path, name: str) -> None:
    (out / name).write_text("[" * 100_000 + "]" * 100_000 + "\n")
    _reseal(out, name)


def _junk(out: Path, name: str) -> None:
    (out / name).write_bytes(b"PAR1 not a parquet file PAR1")
    _reseal(out, name)


@pytest.mark.parametrize(("hostile", "says"), [
    (lambda out: _drop(out, "checkpoints.jsonl"), "checkpoints.jsonl is not in the bundle's"),
    (lambda out: _drop(out, "journal.csv"), "journal.csv is not in the bundle's"),
    (lambda out: _junk(out, "coups.parquet"), "cannot be read as a bundle"),
    (lambda out: _manifest(out, lambda m: m["files"]["coups.csv"].pop("bytes")),
     "entry for coups.csv lacks its bytes"),
    (lambda out: _manifest(out, lambda m: m["files"].update(
        {"../outside.csv": m["files"]["coups.csv"]})), "'../outside.csv', which is not a file"),
    (lambda out: _manifest(out, lambda m: m.update(files=[])), "files is not a mapping"),
    (lambda out: _deep(out, "journal.jsonl"), "RecursionError"),
], ids=["no checkpoints", "no journal.csv", "junk parquet", "no bytes", "outside", "no files",
        "deep json"])
def test_a_hostile_bundle_fails_in_one_line(store: Store, tmp_path: Path,
                                            hostile: Callable[[Path], None], says: str) -> None:
    """A bundle is hostile input: a file missing behind a resealed manifest, a junk Parquet
    file, a manifest entry without its size, a name reaching outside the bundle: each is a
    :class:`BundleError` naming it, never a traceback (they were FileNotFoundError,
    ComputeError and KeyError tracebacks)."""
    out = bundle_of(store, tmp_path)
    hostile(out)
    with pytest.raises(BundleError, match=re.escape(says)):
        verify(out)


@pytest.mark.parametrize("forgery", ["approver", "reason", "amended value", "row removed",
                                     "journal table"])
def test_a_resealed_bundle_must_agree_with_its_own_journal(store: Store, tmp_path: Path,
                                                           forgery: str) -> None:
    """The corrections table and the journal's Parquet and CSV are what a reader looks at;
    the chained JSON lines are what the checkpoints vouch for. A bundle whose tables say
    another approver, reason or amended value, hide a correction, or give an event another
    actor verified when resealed (or re-signed by whoever holds the export key)."""
    out = bundle_of(store, tmp_path)
    verify(out)
    fixes = pl.read_parquet(out / "corrections.parquet")
    says = "is not what that"
    if forgery == "approver":
        _rewrite(out, "corrections", fixes.with_columns(pl.lit("nobody").alias("approved_by")))
    elif forgery == "reason":
        _rewrite(out, "corrections", fixes.with_columns(pl.lit("a reason").alias("reason")))
    elif forgery == "amended value":
        _rewrite(out, "corrections", fixes.with_columns(
            pl.when(pl.col("kind") == "coup_amended").then(pl.lit("T"))
            .otherwise("amended_outcome").alias("amended_outcome")))
    elif forgery == "row removed":
        _rewrite(out, "corrections", fixes.filter(pl.col("kind") != "coup_amended"))
        hidden = fixes.filter(pl.col("kind") == "coup_amended").row(0, named=True)
        coups = pl.read_parquet(out / "coups.parquet")
        it = pl.col("coup") == hidden["coup"]
        _rewrite(out, "coups", coups.with_columns(  # (its coup put back as entered, unmarked)
            pl.when(it).then(pl.lit(hidden["original_outcome"])).otherwise(pl.col("outcome"))
            .cast(coups.schema["outcome"]).alias("outcome"),
            pl.when(it).then(None).otherwise(pl.col("correction")).alias("correction")))

        def one_row(m: dict[str, Any]) -> None:
            for name in ("corrections.parquet", "corrections.csv"):
                m["files"][name]["rows"] = 1
            m["data_digest"] = data_digest(m["files"])
        _manifest(out, one_row)
        says = "lists 1 correction(s), the journal holds 2"
    else:
        journal = pl.read_parquet(out / "journal.parquet")
        _rewrite(out, "journal", journal.with_columns(pl.lit("mallory").alias("actor")))
        says = "journal.parquet and journal.csv do not hold the events of journal.jsonl"
    with pytest.raises(BundleError, match=re.escape(says)):
        verify(out)


def _reseal(out: Path, name: str) -> None:
    """What a forger without the signing key can do: recompute a file's digest."""
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"][name]["sha256"] = sha256(out / name)
    manifest["files"][name]["bytes"] = (out / name).stat().st_size
    manifest["data_digest"] = data_digest(manifest["files"])
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def _rewrite(out: Path, table: str, frame: pl.DataFrame) -> None:
    """Replace a bundle table in both formats and reseal the manifest (a careful forger)."""
    from roads.audit.bundle import csv_ready

    frame.write_parquet(out / f"{table}.parquet")
    csv_ready(frame).write_csv(out / f"{table}.csv")
    for name in (f"{table}.parquet", f"{table}.csv"):
        _reseal(out, name)


def test_editing_the_manifest_fails(store: Store, tmp_path: Path, keys: tuple[Path, Path]) -> None:
    out = bundle_of(store, tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["coups.csv"]["rows"] = 4
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"coups\.csv has 5 rows, the manifest says 4"):
        verify(out)
    shutil.rmtree(out)
    signed = bundle_of(store, tmp_path, keys[0])
    text = (signed / "manifest.json").read_text().replace('"auditor"', '"someone"')
    (signed / "manifest.json").write_text(text)
    with pytest.raises(BundleError, match="signature does not match"):
        verify(signed, keys[1])


def test_a_broken_journal_link_fails(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    lines = (out / "journal.jsonl").read_text().splitlines()
    event = json.loads(lines[3])
    event["payload"]["outcome"] = "T"  # rewrite history
    lines[3] = json.dumps(event)
    (out / "journal.jsonl").write_text("\n".join(lines) + "\n")
    _reseal(out, "journal.jsonl")
    with pytest.raises(BundleError, match=f"journal chain broken: event {event['seq']} was "
                                          "altered"):
        verify(out)


def test_csv_and_parquet_must_agree(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    text = (out / "coups.csv").read_text().replace(",P,", ",B,", 1)
    (out / "coups.csv").write_text(text)
    _reseal(out, "coups.csv")
    with pytest.raises(BundleError, match=r"coups\.csv and coups\.parquet disagree"):
        verify(out)


def test_a_signed_bundle_verifies_only_with_its_key(store: Store, tmp_path: Path,
                                                     keys: tuple[Path, Path]) -> None:
    out = bundle_of(store, tmp_path, keys[0])
    assert verify(out, keys[1])["files"]
    other_private, other_public = tmp_path / "o.pem", tmp_path / "o.pub"
    generate_keys(other_private, other_public)
    with pytest.raises(BundleError, match="signature does not match this public key"):
        verify(out, other_public)
    with pytest.raises(BundleError, match="give --pubkey"):
        verify(out)
    unsigned = tmp_path / "unsigned"
    export_bundle(store, Slice(table_id="T1", shoe_id="S1"), unsigned, "a")
    with pytest.raises(BundleError, match="not signed"):
        verify(unsigned, keys[1])


def test_bundle_round_trips_through_ingest(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    fresh = Store.create(tmp_path / "fresh")
    standing = tmp_path / "standing.parquet"
    pl.read_parquet(out / "coups.parquet").filter(
        pl.col("correction").fill_null("") != "voided").write_parquet(standing)
    result = ingest([standing], fresh, ReadOptions(), get_rules("standard-8"))
    assert result.quarantined == 0
    columns = ["table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards"]
    assert fresh.read.coups().select(columns).equals(
        store.read.coups(Selection("T1")).select(columns))
    # Into the store it came from, the live shoe's coups are a conflict, never a copy.
    again = ingest([standing], store, ReadOptions(), get_rules("standard-8"))
    assert again.report["files"][0]["conflicts"] == 4 and again.report["totals"]["accepted"] == 0


def test_export_refuses_a_used_directory_and_an_empty_slice(store: Store,
                                                            tmp_path: Path) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("x")
    with pytest.raises(InputError, match="must be new or empty"):
        export_bundle(store, Slice(shoe_id="S1"), tmp_path / "used", "a")
    with pytest.raises(InputError, match="nothing to export for table T9, shoe nope: no "
                                         "shoe"):  # (words, not a Python dict)
        export_bundle(store, Slice(table_id="T9", shoe_id="nope"), tmp_path / "b", "a")
    with pytest.raises(InputError, match="nothing to export for table T1, from 2030-01-01"):
        export_bundle(store, Slice(table_id="T1", start=date(2030, 1, 1)), tmp_path / "c", "a")


def test_a_resealed_file_without_a_new_data_digest_fails(store: Store, tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    text = (out / "shoes.csv").read_text().replace("standard-8", "standard-6", 1)
    (out / "shoes.csv").write_text(text)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["shoes.csv"]["sha256"] = sha256(out / "shoes.csv")
    manifest["files"]["shoes.csv"]["bytes"] = (out / "shoes.csv").stat().st_size
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="data digest does not match"):
        verify(out)


def test_journal_events_are_exported_as_csv_and_parquet_too(store: Store,
                                                            tmp_path: Path) -> None:
    out = bundle_of(store, tmp_path)
    events = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    table = pl.read_parquet(out / "journal.parquet")
    assert table["seq"].to_list() == [e["seq"] for e in events]
    assert [json.loads(p) if p else None for p in table["payload"]] == \
        [e.get("payload") for e in events]
    assert pl.read_csv(out / "journal.csv")["hash"].to_list() == [e["hash"] for e in events]


def test_streamed_chunks_equal_the_read_port(store: Store) -> None:
    """Chunks of two rows, corrections applied per chunk, give the read port's coups."""
    streamed = pl.concat(list(store.read.chunks(Selection("T1"), rows=2)))
    expected = store.read.coups(Selection("T1"))
    assert streamed.sort("shoe_id", "coup").equals(expected.sort("shoe_id", "coup"))


def test_a_pdf_of_too_many_coups_is_refused_before_writing(store: Store, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    import roads.audit.bundle as bundle

    monkeypatch.setattr(bundle, "PDF_MAX_COUPS", 3)
    with pytest.raises(InputError, match="a PDF of 4 coups"):
        export_bundle(store, Slice(table_id="T1", shoe_id="S1"), tmp_path / "b", "x",
                      formats=("pdf",))
    assert not (tmp_path / "b").exists()  # refused before anything was written


def test_a_one_shoe_bundle_holds_no_other_tables_events(tmp_path: Path) -> None:
    """Other tables' events (and logins, with their addresses) are redacted links: the chain
    verifies, but their contents are not in the bundle; an audit export may ask for logins."""
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.store.journal.append("login", "*", None, {"user": "ana", "address": "10.1.2.3"},
                               "ana")
    floor.open_shoe("T2", "X1")
    floor.coups("T2", "PP")
    floor.coups("T1", "BB")
    floor.close("T1")
    out = tmp_path / "bundle"
    export_bundle(floor.store, Slice("T1", "S1"), out, "auditor")
    verify(out)
    text = (out / "journal.jsonl").read_text()
    assert "10.1.2.3" not in text and '"X1"' in text  # a redacted link names only its shoe
    events = [json.loads(line) for line in text.splitlines()]
    assert {e["table_id"] for e in events if not e.get("redacted")} <= {"T1", "*"}
    assert not any(e.get("kind") == "login" for e in events)
    audit = tmp_path / "audit"
    export_bundle(floor.store, Slice("T1", "S1"), audit, "auditor", logins=True)
    verify(audit)
    assert "10.1.2.3" in (audit / "journal.jsonl").read_text()


def test_an_open_shoe_is_exported_marked_open_and_checked_against_its_events(
        tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPT")
    out = tmp_path / "bundle"
    export_bundle(floor.store, Slice("T1", "S1"), out, "auditor", formats=("pdf",))
    verify(out)
    assert pl.read_parquet(out / "shoes.parquet")["open"].to_list() == [True]
    # A coup changed in the bundle (digests recomputed) no longer matches the journal.
    coups = pl.read_parquet(out / "coups.parquet")
    changed = coups.with_columns(pl.when(pl.col("coup") == 2).then(pl.lit("B"))
                                 .otherwise(pl.col("outcome").cast(pl.String))
                                 .cast(coups.schema["outcome"]).alias("outcome"))
    _rewrite(out, "coups", changed)
    with pytest.raises(BundleError, match="live shoe T1/S1 are not the coups its journal"):
        verify(out)


def test_imported_coups_are_checked_against_their_journaled_digests(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "store")
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result\nT9,H1,1,B\nT9,H1,2,P\nT9,H2,1,T\n")
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    out = tmp_path / "bundle"
    export_bundle(store, Slice("T9", "H1"), out, "auditor")
    verify(out)
    listing = pl.read_parquet(out / "file_shoes.parquet")
    assert listing["shoe_id"].to_list() == ["H1", None]  # the other shoe as a leaf only
    coups = pl.read_parquet(out / "coups.parquet")
    changed = coups.with_columns(pl.lit("B").cast(coups.schema["outcome"]).alias("outcome"))
    _rewrite(out, "coups", changed)
    with pytest.raises(BundleError, match="not the coups stored in"):
        verify(out)


def test_a_shoe_imported_in_parts_is_one_shoe_to_every_reader(tmp_path: Path) -> None:
    """A later file carrying a stored shoe's later coups (a shoe across two daily exports):
    its shoe row counts every coup, and its bundle verifies part by part."""
    store = Store.create(tmp_path / "store")
    head = "table,shoe,coup,result,player,banker,time\n"
    first, second = tmp_path / "day1.csv", tmp_path / "day2.csv"
    first.write_text(head + "T9,H1,1,P,9h Kd,5s 3c,2026-03-01T23:58:00Z\n"
                     "T9,H1,2,P,8h Qd,7s Kc,2026-03-01T23:59:00Z\n")
    second.write_text(head + "T9,H1,3,T,9c Kh,9s Jc,2026-03-02T00:00:30Z\n"
                      "T9,H1,4,P,4h 3d,4c 2s,2026-03-02T00:01:30Z\n")
    for f in (first, second):
        report = ingest([f], store, ReadOptions(), get_rules("standard-8"))
        totals = report.report["totals"]
        assert (totals["accepted"], totals["flagged"], totals["quarantined"]) == (2, 0, 0)
    row = store.read.shoes().row(0, named=True)
    assert (row["coups"], row["cards_dealt"]) == (4, 16)
    assert str(row["started_at"]) == "2026-03-01 23:58:00+00:00"
    assert str(row["ended_at"]) == "2026-03-02 00:01:30+00:00"
    page, total = store.read.shoe_page()
    assert total == 1 and page["coups"].to_list() == [4]
    out = tmp_path / "bundle"
    export_bundle(store, Slice("T9", "H1"), out, "auditor")
    verify(out)
    assert pl.read_csv(out / "shoes.csv")["coups"].to_list() == [4]
    assert sorted(pl.read_parquet(out / "file_shoes.parquet")["coups"].to_list()) == \
        ["1-2", "3-4"]
    # Claiming a coup for the other file is caught: each part's digest is recomputed.
    listing = pl.read_parquet(out / "file_shoes.parquet")
    moved = listing.with_columns(pl.col("coups").replace({"1-2": "1-3", "3-4": "4"}))
    _rewrite(out, "file_shoes", moved)
    with pytest.raises(BundleError, match="not the coups stored in"):
        verify(out)


@pytest.mark.parametrize(("field", "change"), [("coups", 1), ("coups", -1),
                                               ("cards_dealt", 1)])
def test_a_shoe_row_that_disagrees_with_its_coups_fails(tmp_path: Path, field: str,
                                                        change: int) -> None:
    """The shoe rows are the one table nothing else recomputes: a row whose coup or card
    count is not its listed coups' (voided ones left out) fails, even resealed."""
    store = Store.create(tmp_path / "store")
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result,player,banker\nT9,H1,1,P,9h Kd,5s 3c\n"
                   "T9,H1,2,P,2h 3d 4c,7s Kc\nT9,H2,1,T,9c Kh,9s Jc\n")
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    out = tmp_path / "bundle"
    export_bundle(store, Slice("T9", "H1"), out, "auditor")
    verify(out)
    shoes = pl.read_parquet(out / "shoes.parquet")
    assert shoes.select("coups", "cards_dealt").row(0) == (2, 9)  # (counted by hand)
    _rewrite(out, "shoes", shoes.with_columns(
        (pl.col(field) + change).cast(shoes.schema[field])))
    with pytest.raises(BundleError, match=f"T9/H1: its row says {field} "):
        verify(out)


def test_a_voided_coup_is_not_counted_in_its_shoe_row(store: Store, tmp_path: Path) -> None:
    """The fixture's shoe entered five coups and voided one: its row says four, and so
    does the check; counting the voided one too fails."""
    out = bundle_of(store, tmp_path)
    verify(out)
    shoes = pl.read_parquet(out / "shoes.parquet")
    coups = pl.read_parquet(out / "coups.parquet")
    assert (coups.height, shoes["coups"].to_list()) == (5, [4])
    _rewrite(out, "shoes", shoes.with_columns(pl.lit(5).cast(shoes.schema["coups"])
                                              .alias("coups")))
    with pytest.raises(BundleError, match="its row says coups 5, its coups give 4"):
        verify(out)


@pytest.mark.parametrize(("column", "value"), [("rules", "standard-6"),
                                               ("burn_cards", ["3h", "Kd", "2c"]),
                                               ("cut_card_index", 300), ("source", "import")])
def test_a_live_shoes_row_must_be_what_its_events_give(store: Store, tmp_path: Path,
                                                       column: str, value: object) -> None:
    """A live shoe's rule set, burn cards, cut card and source are in its ``shoe_opened``
    event: a shoe row that says otherwise fails, even resealed."""
    out = bundle_of(store, tmp_path)
    shoes = pl.read_parquet(out / "shoes.parquet")
    changed = shoes.with_columns(pl.Series(column, [value], dtype=shoes.schema[column]))
    assert not changed.equals(shoes)
    _rewrite(out, "shoes", changed)
    with pytest.raises(BundleError, match="the shoe row of live shoe T1/S1 is not"):
        verify(out)


@pytest.mark.parametrize("sealed", [False, True])
def test_a_shoe_whose_every_coup_was_voided_exports_and_verifies(tmp_path: Path,
                                                                 sealed: bool) -> None:
    """Every coup of a shoe voided: its row kept its stored count (the recount found no coup
    left to count), so its own export failed ``roads verify`` ("its row says coups 2, its
    coups give 0"). It dealt nothing: its row says 0."""
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    floor.coups("T1", "B")
    floor.void("T1", "S1", 1, "double entry")
    floor.void("T1", "S1", 2, "double entry")
    if sealed:
        floor.close("T1")
    row = floor.store.read.shoes().row(0, named=True)
    assert (row["coups"], row["cards_dealt"]) == (0, None)
    out = tmp_path / "bundle"
    export_bundle(floor.store, Slice("T1", "S1"), out, "auditor")
    verify(out)
    assert pl.read_parquet(out / "coups.parquet")["correction"].to_list() == ["voided"] * 2


@pytest.mark.parametrize("when", ["after the signature", "mid-read"])
@pytest.mark.parametrize("meanwhile", ["a coup", "a void", "a seal", "a new shoe",
                                       "another table's seal", "an import"])
def test_a_table_dealing_during_an_export_leaves_its_bundle_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, meanwhile: str, when: str) -> None:
    """The export signs the journal's head, then reads; a coup dealt (or a void, a seal, a
    new shoe opened) in between went into the bundle's coups or shoes but not into its
    journal range, and the bundle failed ``roads verify``. The export now reads the store
    as of the head it signed: what happened after is in the next export."""
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    floor.open_shoe("T2", "S1")
    floor.coups("T2", "P")
    more = tmp_path / "more.csv"
    more.write_text("table,shoe,coup,result\nT9,H1,1,B\n")
    signed = floor.store.sign_head
    read_shoes = bundle_module._shoes_of

    def deal() -> None:
        if meanwhile == "a coup":
            floor.coups("T1", "P")
        elif meanwhile == "a void":
            floor.void("T1", "S1", 2)
        elif meanwhile == "a seal":
            floor.close("T1")
        elif meanwhile == "a new shoe":
            floor.close("T1")
            floor.open_shoe("T1", "S2")
            floor.coups("T1", "T")
        elif meanwhile == "another table's seal":  # (every export lists every shoes file)
            floor.close("T2")
        else:
            ingest([more], floor.store, ReadOptions(), get_rules("standard-8"))

    def sign_then_deal(*args: Any, **kwargs: Any) -> Any:
        point = signed(*args, **kwargs)
        monkeypatch.setattr(floor.store, "sign_head", signed)  # (once)
        deal()
        return point

    def read_then_deal(*args: Any, **kwargs: Any) -> Any:
        shoes = read_shoes(*args, **kwargs)
        deal()
        return shoes

    if when == "after the signature":
        monkeypatch.setattr(floor.store, "sign_head", sign_then_deal)
    else:
        monkeypatch.setattr(bundle_module, "_shoes_of", read_then_deal)
    out = tmp_path / "bundle"
    export_bundle(floor.store, Slice("T1"), out, "auditor")
    verify(out)
    coups = pl.read_parquet(out / "coups.parquet")
    assert coups["outcome"].cast(pl.String).to_list() == ["B", "P", "B"]
    assert coups["correction"].null_count() == 3  # (the void came after the head)
    monkeypatch.setattr(bundle_module, "_shoes_of", read_shoes)
    assert pl.read_parquet(out / "shoes.parquet")["shoe_id"].to_list() == ["S1"]
    later = tmp_path / "later"  # (the next export holds what happened meanwhile)
    export_bundle(floor.store, Slice("T1"), later, "auditor")
    verify(later)


@given(st.sets(st.integers(1, 200)))
def test_coup_ranges_give_back_their_numbers(numbers: set[int]) -> None:
    ranges = coup_ranges(sorted(numbers))
    assert coup_numbers(ranges) == sorted(numbers)
    assert len(ranges.split()) == 1 + sum(1 for n in numbers if n + 1 not in numbers) - 1 \
        if numbers else ranges == ""


@given(st.lists(st.lists(st.integers(1, 90), min_size=1, max_size=40), min_size=1,
                max_size=8), st.booleans())
@example([[1, 1, 3], [2, 4, 3]], False)  # a repeat that spans lo..hi; a gap-free shoe from 2
def test_coup_ranges_by_shoe_are_each_shoes_ranges(shoes: list[list[int]],
                                                    whole: bool) -> None:
    """Shoes with every coup once (``whole``: the usual shoe, 1..n), with gaps and with
    repeats, rows in any order: each shoe's ranges are those of its sorted numbers."""
    if whole:
        shoes = [list(range(1, len(numbers) + 1))[::-1] for numbers in shoes]
    coups = pl.DataFrame([("T" + str(i % 2), f"S{i}", n) for i, numbers in enumerate(shoes)
                          for n in numbers],
                         schema={"table_id": pl.String, "shoe_id": pl.String,
                                 "coup": pl.Int16}, orient="row")
    assert coup_ranges_by_shoe(coups) == {
        ("T" + str(i % 2), f"S{i}"): coup_ranges(sorted(numbers))
        for i, numbers in enumerate(shoes)}


@pytest.mark.parametrize("bad", ["x", "1-", "0", "5-3", "1-99999", "1--2", "-3"])
def test_a_malformed_coup_list_is_a_bundle_error(bad: str) -> None:
    with pytest.raises(BundleError, match="is not a list of coup ranges"):
        coup_numbers(bad)
