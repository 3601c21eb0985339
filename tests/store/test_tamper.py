"""Tampering with a store: every change to a stored byte, file or event is noticed and
named by `roads store verify`, and a signed bundle of the tampered store fails `roads
verify`."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from roads.audit.bundle import BundleError, Slice, export_bundle, generate_keys, verify
from roads.errors import InputError, JournalRewritten, SigningRefused, UnsignedCommit
from roads.files import sha256
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Selection, Store, StoreReadError
from roads.store.verify import verify as verify_store
from tests.floor import Floor
from tests.store.rechain import rechain


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a sealed live shoe (T1/S1), an imported shoe (T9/H1), an open shoe."""
    root = tmp_path_factory.mktemp("pristine")
    floor = Floor(root / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPPBT")
    floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    floor.close("T1")
    csv = root / "import.csv"
    csv.write_text("table,shoe,coup,result\nT9,H1,1,B\nT9,H1,2,P\nT9,H1,3,B\n")
    ingest([csv], floor.store, ReadOptions(), get_rules("standard-8"))
    floor.open_shoe("T1", "S2")
    floor.coups("T1", "PP")
    floor.store.checkpoint()
    assert verify_store(floor.store).ok
    return root / "store"


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Store:
    copy = tmp_path / "store"
    shutil.copytree(pristine, copy)
    return Store.open(copy)


def _file(store: Store, source: str, table: str = "coups") -> Path:
    db = store.journal.connection()
    [path] = [str(r[0]) for r in db.execute(
        "SELECT path FROM catalog WHERE tbl = ? AND source = ?", (table, source))]
    return store.root / path


def _rewrite(path: Path, change: Callable[[pl.DataFrame], pl.DataFrame]) -> None:
    """Rewrite a part file with its provenance metadata kept (what a careful forger does)."""
    meta = pq.read_metadata(path).metadata
    table = change(pl.read_parquet(path)).to_arrow()
    pq.write_table(table.replace_schema_metadata(meta), path)


def _flip_outcome(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.when(pl.col("coup") == 1).then(pl.lit("T"))
                              .otherwise(pl.col("outcome").cast(pl.String))
                              .cast(frame.schema["outcome"]).alias("outcome"))


def _kinds(store: Store) -> dict[str, str]:
    return {p["kind"]: p["where"] for p in verify_store(store).first_of_each_kind()}


def _bundle_fails(store: Store, tmp_path: Path, what: Slice) -> None:
    generate_keys(tmp_path / "k.pem", tmp_path / "k.pub")
    try:
        export_bundle(store, what, tmp_path / "bundle", "auditor", tmp_path / "k.pem")
    except (StoreReadError, ValueError, SigningRefused):
        return  # the tampered store could not even be exported (or signed): also noticed
    with pytest.raises(BundleError):
        verify(tmp_path / "bundle", tmp_path / "k.pub")


def test_a_rewritten_sealed_file_is_named(store: Store, tmp_path: Path) -> None:
    path = _file(store, "live")
    _rewrite(path, _flip_outcome)
    assert _kinds(store).get("altered") == path.relative_to(store.root).as_posix()
    _bundle_fails(store, tmp_path, Slice("T1", "S1"))


def test_a_rewritten_imported_file_is_named(store: Store, tmp_path: Path) -> None:
    path = _file(store, "import")
    _rewrite(path, _flip_outcome)
    assert _kinds(store).get("altered") == path.relative_to(store.root).as_posix()
    _bundle_fails(store, tmp_path, Slice("T9", "H1"))


def _same_size_metadata_edit(path: Path) -> None:
    """One character of the footer's provenance changed: the file keeps its size and its
    coups (it decodes as before), but it is no longer the file the journal recorded."""
    data = bytearray(path.read_bytes())
    run = pq.read_metadata(path).metadata[b"roads.ingest_run"]
    at = data.rindex(run) + len(run) - 1
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    path.write_bytes(bytes(data))
    assert pq.read_metadata(path).metadata[b"roads.ingest_run"] != run  # (still decodes)


def _more_coups(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns((pl.col("coups") + 1).cast(frame.schema["coups"]))


@pytest.mark.parametrize(("table", "tamper"), [("coups", "rewritten"), ("coups", "same size"),
                                               ("shoes", "rewritten")])
def test_an_export_refuses_an_altered_file_and_leaves_no_bundle(
        store: Store, tmp_path: Path, table: str, tamper: str) -> None:
    """The export checks each coups file it takes shoes from, and every shoes file, against
    the SHA-256 and size its journal event recorded, so a store with an altered file never
    yields a signed bundle. (A shoes file's altered shoe row passed ``roads verify`` in the
    bundle: nothing there recomputes shoe rows.)"""
    path = _file(store, "import", table)
    rel = path.relative_to(store.root).as_posix()
    generate_keys(tmp_path / "k.pem", tmp_path / "k.pub")
    export_bundle(store, Slice("T9", "H1"), tmp_path / "before", "auditor", tmp_path / "k.pem")
    verify(tmp_path / "before", tmp_path / "k.pub")  # (the pristine store exports)
    if tamper == "rewritten":
        _rewrite(path, _flip_outcome if table == "coups" else _more_coups)
    else:
        _same_size_metadata_edit(path)
    out = tmp_path / "bundle"
    with pytest.raises(StoreReadError, match=re.escape(rel)):
        export_bundle(store, Slice("T9", "H1"), out, "auditor", tmp_path / "k.pem")
    assert not out.exists()
    out.mkdir()  # an empty directory the caller made is kept, and left empty
    with pytest.raises(StoreReadError, match="nothing is exported"):
        export_bundle(store, Slice("T9", "H1"), out, "auditor", tmp_path / "k.pem")
    assert out.is_dir() and not any(out.iterdir())
    other = tmp_path / "other" / "nested"  # (parents it makes go too, on a refusal)
    if table == "coups":  # another coups file's shoes still export
        export_bundle(store, Slice("T1", "S1"), other, "auditor", tmp_path / "k.pem")
        verify(other, tmp_path / "k.pub")
    else:  # every export reads shoe rows from every shoes file: each refuses
        with pytest.raises(StoreReadError, match=re.escape(rel)):
            export_bundle(store, Slice("T1", "S1"), other, "auditor", tmp_path / "k.pem")
        assert not (tmp_path / "other").exists()


def test_a_shoe_row_planted_in_another_shoes_file_is_refused(store: Store,
                                                             tmp_path: Path) -> None:
    """A row for an exported shoe added to a shoes file that does not hold it (the reader
    takes shoe rows from every shoes file) is refused too, not carried into the bundle."""
    sealed, imported = _file(store, "live", "shoes"), _file(store, "import", "shoes")
    meta = pq.read_metadata(imported).metadata
    row = pl.read_parquet(sealed).filter(pl.col("shoe_id") == "S1")
    planted = pl.concat([pl.read_parquet(imported), _more_coups(row)])
    pq.write_table(planted.to_arrow().replace_schema_metadata(meta), imported)
    with pytest.raises(StoreReadError, match=re.escape(imported.relative_to(
            store.root).as_posix())):
        export_bundle(store, Slice("T1", "S1"), tmp_path / "bundle", "auditor")
    assert not (tmp_path / "bundle").exists()


def test_a_file_swapped_back_after_it_is_read_is_still_refused(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tamperer who puts an altered shoes file in place and restores the journaled one the
    moment the export has parsed it leaves nothing for a later check of the file to find:
    the export must check the very bytes it parsed. (Checking each file, then reading it
    again, exported the altered shoe row, and the bundle passed ``roads verify``.)"""
    path = _file(store, "import", "shoes")
    rel = path.relative_to(store.root).as_posix()
    pristine = path.read_bytes()
    _rewrite(path, _more_coups)
    altered = path.read_bytes()
    real = pl.read_parquet

    def read_then_restore(source: object, *args: object, **kwargs: object) -> pl.DataFrame:
        frame = real(source, *args, **kwargs)  # type: ignore[arg-type]
        if source in (path, str(path), altered):  # (the altered file has just been parsed)
            path.write_bytes(pristine)
        return frame

    monkeypatch.setattr(pl, "read_parquet", read_then_restore)
    generate_keys(tmp_path / "k.pem", tmp_path / "k.pub")
    out = tmp_path / "bundle"
    with pytest.raises(StoreReadError, match=re.escape(f"{rel}: holds") + ".* the journal says"):
        export_bundle(store, Slice("T9", "H1"), out, "auditor", tmp_path / "k.pem")
    assert not out.exists()
    assert path.read_bytes() == altered  # (refused before it was parsed: never swapped back)


def test_a_catalogue_patched_to_match_an_altered_file_is_no_cover(store: Store,
                                                                 tmp_path: Path) -> None:
    """The export compares files with the journal's file events, not the catalogue: an
    attacker who rewrites a file and patches its catalogue row to the new size and SHA-256
    is still refused."""
    path = _file(store, "import")
    _rewrite(path, _flip_outcome)
    rel = path.relative_to(store.root).as_posix()
    with sqlite3.connect(store.root / "journal.sqlite") as db:
        db.execute("UPDATE catalog SET sha256 = ?, bytes = ? WHERE path = ?",
                   (sha256(path), path.stat().st_size, rel))
    with pytest.raises(StoreReadError, match=re.escape(f"{rel}: holds")):
        export_bundle(store, Slice("T9", "H1"), tmp_path / "bundle", "auditor")


def test_a_file_taken_out_of_the_catalogue_is_no_cover(store: Store, tmp_path: Path) -> None:
    """Deleting a file's catalogue rows (its coups file and its shoes file) hid its shoes
    from an export of everything without a word, and the bundle verified. The journal's
    file events still hold the files: the export refuses, naming one."""
    coups, shoes = _file(store, "import"), _file(store, "import", "shoes")
    rels = {p.relative_to(store.root).as_posix() for p in (coups, shoes)}
    with sqlite3.connect(store.root / "journal.sqlite") as db:
        for rel in rels:
            db.execute("DELETE FROM catalog WHERE path = ?", (rel,))
            db.execute("DELETE FROM catalog_shoes WHERE path = ?", (rel,))
    everything = Slice(start=date(1970, 1, 1), end=date(9999, 12, 31))
    with pytest.raises(StoreReadError, match="|".join(map(re.escape, rels))
                       + ".*the catalogue does not list it"):
        export_bundle(store, everything, tmp_path / "bundle", "auditor")
    assert not (tmp_path / "bundle").exists()


def test_a_shoe_taken_out_of_the_shoe_index_is_no_cover(store: Store, tmp_path: Path) -> None:
    """Deleting a file's rows of the shoe index (which shoes a coups file holds) made the
    export read no coups for its shoes: the bundle must then fail ``roads verify`` (its shoe
    row says three coups, it lists none)."""
    rel = _file(store, "import").relative_to(store.root).as_posix()
    with sqlite3.connect(store.root / "journal.sqlite") as db:
        db.execute("DELETE FROM catalog_shoes WHERE path = ?", (rel,))
    generate_keys(tmp_path / "k.pem", tmp_path / "k.pub")
    try:
        export_bundle(store, Slice("T9", "H1"), tmp_path / "bundle", "auditor",
                      tmp_path / "k.pem")
    except StoreReadError:
        return  # (refused outright: also noticed)
    with pytest.raises(BundleError, match="T9/H1: its row says coups 3, its coups give 0"):
        verify(tmp_path / "bundle", tmp_path / "k.pub")


@pytest.mark.parametrize("linked", [False, True])
def test_a_bundle_is_never_written_inside_the_store(store: Store, tmp_path: Path,
                                                    linked: bool) -> None:
    """``--out`` inside the store (directly, or through a link) would leave files there that
    no journal event names: refused before anything is written."""
    inside = store.root / "coups" / "bundle"
    out = inside
    if linked:
        out = tmp_path / "link"
        out.symlink_to(store.root / "coups", target_is_directory=True)
        out = out / "bundle"
    with pytest.raises(InputError, match="cannot be written inside the store"):
        export_bundle(store, Slice("T9", "H1"), out, "auditor")
    assert not inside.exists()
    assert verify_store(store).ok


@pytest.mark.parametrize(("kind", "payload", "says"), [
    ("coup_voided", {"coup": "three", "approver": "x"}, "its coup is 'three'"),
    ("coup_voided", {"approver": "x"}, "its coup is None"),
    ("coup_voided", {"coup": True}, "its coup is True"),
    ("coup_amended", {"coup": 2, "approver": "x"}, "it holds no new values"),
    ("coup_voided", {"coup": 10**30}, "not a coup number (1-208)"),
    ("coup_amended", {"coup": 2, "new": {"outcome": "Z"}}, "new outcome 'Z' is not B, P or T"),
    ("coup_amended", {"coup": 2, "new": {"outcome": 5}}, "new outcome 5 is not B, P or T"),
    ("coup_amended", {"coup": 2, "new": {"player_cards": ["Zz", "9h"]}},
     "is not a hand of two or three card codes"),
    ("coup_amended", {"coup": 2, "new": {"banker_total": 12}}, "is not a total 0-9"),
    ("coup_amended", {"coup": 2, "new": {"natural": "yes"}}, "is not true or false"),
], ids=["text", "none", "bool", "no new values", "huge", "outcome Z", "outcome 5", "cards",
        "total", "flag"])
def test_a_malformed_correction_is_named_not_a_traceback(
        store: Store, tmp_path: Path, kind: str, payload: dict[str, object], says: str) -> None:
    """A correction event written past the entry points (appended to the journal, chained
    as the store chains) crashed every read of its shoe with a ValueError or KeyError
    traceback. Now each read refuses it by its sequence number, and ``store verify`` names
    it."""
    seq = store.journal.append(kind, "T9", "H1", payload, "mallory").seq
    with pytest.raises(InputError, match=f"journal event {seq} .*{re.escape(says)}"):
        store.read.coups(Selection("T9", "H1"))
    with pytest.raises(InputError, match=f"journal event {seq} "):
        export_bundle(store, Slice("T9", "H1"), tmp_path / "bundle", "auditor")
    assert not (tmp_path / "bundle").exists()
    assert _kinds(store).get("event") == f"event {seq}"
    assert store.read.coups(Selection("T1", "S1")).height == 6  # (other tables unaffected)


def test_a_bad_signing_key_leaves_no_bundle(store: Store, tmp_path: Path) -> None:
    """A signing key that cannot be read fails the export before it writes anything (a
    bundle without its signature could be mistaken for an unsigned one)."""
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    with pytest.raises((InputError, ValueError)):
        export_bundle(store, Slice("T9", "H1"), tmp_path / "bundle", "auditor", bad)
    assert not (tmp_path / "bundle").exists()


def test_a_flipped_byte_is_named_and_other_shoes_stay_readable(store: Store) -> None:
    path = _file(store, "import")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert _kinds(store).get("altered") == path.relative_to(store.root).as_posix()
    assert store.read.coups(Selection("T1", "S1")).height == 6  # other files unaffected


def test_a_corrupt_footer_is_named_on_read(store: Store) -> None:
    path = _file(store, "import")
    path.write_bytes(path.read_bytes()[:-12] + b"\0" * 12)
    with pytest.raises(StoreReadError, match=path.name):
        store.read.coups()
    assert store.read.coups(Selection("T1")).height == 8  # the other shoes stay readable


def test_a_deleted_file_is_named(store: Store) -> None:
    path = _file(store, "live")
    path.unlink()
    assert _kinds(store).get("missing") == path.relative_to(store.root).as_posix()


def test_an_extra_file_is_named(store: Store) -> None:
    source = _file(store, "live")
    extra = source.parent / "part-live-extra.parquet"
    shutil.copy(source, extra)
    assert _kinds(store).get("not accounted for") == extra.relative_to(store.root).as_posix()
    assert store.read.coups().height == 11  # and it is never read


def _db(store: Store, sql: str) -> None:
    db = sqlite3.connect(store.root / "journal.sqlite")
    db.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;" + sql)
    db.commit()
    db.close()


def test_a_truncated_journal_is_named(store: Store, tmp_path: Path) -> None:
    head = store.journal.head()[0]
    _db(store, f"DELETE FROM events WHERE seq > {head - 2};")
    assert "checkpoint" in _kinds(store)
    _bundle_fails(store, tmp_path, Slice("T1", "S2"))


def test_a_rechained_journal_is_named(store: Store, tmp_path: Path) -> None:
    events = store.journal.events()
    coup = next(e for e in events if e.kind == "coup_entered")
    rechain(store.root / "journal.sqlite", events, coup, {**coup.payload, "outcome": "T"})
    fresh = Store.open(store.root)
    assert fresh.journal.verify().ok  # the chain itself holds...
    kinds = _kinds(fresh)
    assert "checkpoint" in kinds and "differs from journal" in kinds  # ...but not this
    _bundle_fails(fresh, tmp_path, Slice("T1", "S1"))


@pytest.mark.parametrize("how", ["re-chained", "cut back"])
def test_no_write_signs_over_a_journal_rewritten_behind_its_checkpoints(
        store: Store, tmp_path: Path, how: str) -> None:
    """An export signed the head of a journal re-chained behind its newest checkpoint (its
    bundle failed, but the store's checkpoints now held a signature over the rewrite: with
    the older lines trimmed, the store alone would show nothing). Now every signature is
    refused while the journal does not hold the newest checkpoint's head: the export exits
    2 naming why, an ingest is stored but says it is unsigned, and no checkpoint is added."""
    events = store.journal.events()
    if how == "re-chained":
        coup = next(e for e in events if e.kind == "coup_entered")
        rechain(store.root / "journal.sqlite", events, coup, {**coup.payload, "outcome": "T"})
    else:
        _db(store, f"DELETE FROM events WHERE seq > {store.journal.head()[0] - 2};")
    fresh = Store.open(store.root)
    points = store.root / "checkpoints" / "checkpoints.jsonl"
    before = points.read_bytes()
    with pytest.raises(JournalRewritten, match="refusing to sign: the journal no longer "
                                               "holds event"):
        export_bundle(fresh, Slice("T1", "S1"), tmp_path / "bundle", "auditor")
    assert not (tmp_path / "bundle").exists()
    csv = tmp_path / "more.csv"
    csv.write_text("table,shoe,coup,result\nT8,H1,1,B\n")
    with pytest.raises(UnsignedCommit, match=r"import_committed is committed .* not signed"):
        ingest([csv], fresh, ReadOptions(), get_rules("standard-8"))
    assert points.read_bytes() == before  # (nothing signed over it)
    assert "checkpoint" in _kinds(Store.open(store.root))


def test_an_entered_coup_edited_to_no_outcome_is_named_not_a_crash(store: Store) -> None:
    """One byte of a sealed shoe's coup_entered payload changed so its outcome is no
    outcome ("Q"): ``store verify`` stopped with a SchemaError instead of naming it. Now
    the chain names the event, and the sealed-shoe check says it cannot compare."""
    [seq] = [e.seq for e in store.journal.events("T1", "S1") if e.kind == "coup_entered"
             and e.payload["outcome"] == "P"][:1]
    _db(store, "UPDATE events SET payload = replace(payload, '\"outcome\":\"P\"', "
               f"'\"outcome\":\"Q\"') WHERE seq = {seq};")
    kinds = _kinds(Store.open(store.root))
    assert kinds.get("chain") == f"event {seq}"
    assert kinds.get("differs from journal") == "coup_entered events"


def test_a_deleted_seal_event_is_named_and_the_shoe_is_not_counted_twice(store: Store) -> None:
    [seal] = store.journal.of_kinds(("shoe_sealed",))
    _db(store, f"DELETE FROM events WHERE seq = {seal.seq};")
    fresh = Store.open(store.root)
    kinds = _kinds(fresh)
    assert "chain" in kinds and "catalogue" in kinds
    assert fresh.read.coups(Selection("T1", "S1")).height == 6


@pytest.mark.parametrize("folder", ["ingest", "quarantine", "flags"])
def test_a_changed_byte_or_a_deleted_import_attachment_is_named(tmp_path: Path,
                                                                folder: str) -> None:
    """An import's report, quarantined rows and flags are journaled by SHA-256 in its
    commit event: one flipped byte, or the file gone, is named."""
    csv = tmp_path / "dirty.csv"
    csv.write_text("table,shoe,coup,outcome,player_cards,banker_cards\n"
                   "T1,s1,1,B,9h 4s,Kd 8c\nT1,s1,2,P,8h 8s,2d 3c\nT1,s1,2,X,,\n",
                   encoding="utf-8")
    store = Store.create(tmp_path / "store")
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    assert verify_store(store).ok
    [path] = (store.root / folder).iterdir()
    where = path.relative_to(store.root).as_posix()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    assert _kinds(store).get("altered") == where
    path.unlink()
    assert _kinds(store).get("missing") == where


def _cut_after(store: Store, kind: str) -> None:
    """Delete every event after the newest ``kind`` event (a whole open shoe, say)."""
    [*_, last] = store.journal.of_kinds((kind,))
    _db(store, f"DELETE FROM events WHERE seq > {last.seq};")


def test_removed_checkpoints_and_a_cut_tail_are_named(store: Store) -> None:
    """Deleting the checkpoint file took the tail's one witness with it: the file events
    it leaves uncovered say so (before, this store verified)."""
    _cut_after(store, "import_committed")
    (store.root / "checkpoints" / "checkpoints.jsonl").unlink()
    fresh = Store.open(store.root)
    problems = [p for p in verify_store(fresh).problems if p["kind"] == "checkpoint"]
    assert len(problems) == 1 and "no checkpoint at all" in problems[0]["detail"]
    assert "2 file event(s)" in problems[0]["detail"]
    assert fresh.sign_interrupted() is None  # not covered up by the next write either
    assert not verify_store(fresh).ok


def test_checkpoints_kept_elsewhere_expose_a_re_signed_journal(store: Store,
                                                              tmp_path: Path) -> None:
    """The gap docs/compliance.md concedes (the key lies beside the store, so checkpoints
    can be re-signed) closes with a copy kept off the machine: `store verify --anchor`."""
    from click.testing import CliRunner

    from roads.cli import main
    from roads.store import checkpoint

    anchor = tmp_path / "off-machine.jsonl"
    shutil.copy(store.root / "checkpoints" / "checkpoints.jsonl", anchor)
    assert verify_store(store, anchor=anchor).ok
    _cut_after(store, "import_committed")
    (store.root / "checkpoints" / "checkpoints.jsonl").unlink()
    fresh = Store.open(store.root)
    fresh.checkpoint()  # the attacker signs the cut head with the key beside the store
    assert verify_store(fresh).ok  # what the store alone can show
    problems = verify_store(fresh, anchor=anchor).problems
    assert [p["where"] for p in problems] == ["anchor off-machine.jsonl"]
    assert "tail was cut" in problems[0]["detail"]
    # a new key re-signing everything is named as such
    for name in ("store-ed25519.pem", "store-ed25519.pub"):
        (store.root / "keys" / name).unlink()
    (store.root / "checkpoints" / "checkpoints.jsonl").unlink()
    checkpoint.create_keys(store.root)
    fresh.checkpoint()
    assert verify_store(fresh).ok
    [problem] = verify_store(fresh, anchor=anchor).problems
    assert "another key" in problem["detail"] and "key was replaced" in problem["detail"]
    result = CliRunner().invoke(main, ["store", "verify", "--store", str(store.root),
                                       "--anchor", str(anchor), "--quiet"])
    assert result.exit_code == 1 and "anchor off-machine.jsonl" in result.output
