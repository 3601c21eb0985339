"""A deleted checkpoint file stays named: none of the store's own later writes (a seal, an
import's sweep, an export) signs the head over the cut or re-chained journal behind it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from roads.audit.bundle import Slice, export_bundle
from roads.errors import InputError
from roads.store import Store
from roads.store.verify import verify
from tests.floor import Floor


def _cut_to_seals(root: Path, keep: int) -> None:
    """What an attacker without the signing key does: keep the first ``keep`` seals, delete
    every later event, file and catalogue row, and the checkpoint file."""
    seals = Store.open(root).journal.of_kinds(("shoe_sealed",))
    last = seals[keep - 1].seq
    db = sqlite3.connect(root / "journal.sqlite")
    db.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;"
                     f"DELETE FROM events WHERE seq > {last};"
                     f"DELETE FROM catalog WHERE seq > {last};")
    for seal in seals[keep:]:
        for item in seal.payload["files"]:
            for table in ("catalog_shoes", "shoe_index"):
                db.execute(f"DELETE FROM {table} WHERE path = ?", (item["path"],))
            (root / item["path"]).unlink()
    db.commit()
    db.close()
    (root / "checkpoints" / "checkpoints.jsonl").unlink()


@pytest.fixture
def cut(tmp_path: Path) -> Path:
    floor = Floor(tmp_path / "store")
    for shoe in ("S1", "S2", "S3"):
        floor.open_shoe("T1", shoe)
        floor.coups("T1", "BPPBT")
        floor.close("T1")
    assert verify(floor.store).ok
    _cut_to_seals(floor.store.root, 2)
    return floor.store.root


def _uncovered(root: Path) -> list[str]:
    return [p["detail"] for p in verify(Store.open(root)).problems if p["kind"] == "checkpoint"]


def test_the_next_seal_does_not_sign_over_removed_checkpoints(cut: Path) -> None:
    [detail] = _uncovered(cut)
    assert "no checkpoint at all" in detail
    floor = Floor(Store.open(cut))
    floor.open_shoe("T2", "X1")
    floor.coups("T2", "B")
    floor.close("T2")  # sealed: before, its checkpoint signed the cut head
    [detail] = _uncovered(cut)
    assert "no checkpoint at all" in detail and "3 file event(s)" in detail


def test_an_export_refuses_to_sign_over_removed_checkpoints(cut: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="checkpoints are missing"):
        export_bundle(Store.open(cut), Slice("T1", "S1"), tmp_path / "bundle", "auditor")
    assert _uncovered(cut)
    assert not (cut / "checkpoints" / "checkpoints.jsonl").exists()


def test_a_first_write_still_signs(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store").sealed_shoe("T1", "S1", "BP")
    assert verify(floor.store).ok
    lines = (floor.store.root / "checkpoints" / "checkpoints.jsonl").read_text().splitlines()
    # the store's creation signs the empty journal (and store.json), its first seal the seal
    assert [json.loads(line)["seq"] for line in lines] == [0, floor.store.journal.head()[0]]


def test_a_damaged_public_key_is_named_not_a_traceback(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from roads.cli import main

    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BP")
    floor.close("T1")
    anchor = tmp_path / "anchor.jsonl"
    anchor.write_bytes((floor.store.root / "checkpoints" / "checkpoints.jsonl").read_bytes())
    (floor.store.root / "keys" / "store-ed25519.pub").write_text("garbage")
    result = CliRunner().invoke(main, ["store", "verify", "--store", str(floor.store.root),
                                       "--anchor", str(anchor), "--quiet"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert "does not read as a PEM public key" in result.output
    problems = [p for p in verify(Store.open(floor.store.root), anchor=anchor).problems
                if p["kind"] == "checkpoint"]
    assert [p["where"] for p in problems] == ["anchor anchor.jsonl", "checkpoints.jsonl"]
    assert all("does not read as a PEM public key" in p["detail"] for p in problems)


def test_a_signature_that_is_not_text_is_invalid(tmp_path: Path) -> None:
    from roads.store import checkpoint

    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.close("T1")
    root = floor.store.root
    point = checkpoint.read(root / "checkpoints" / "checkpoints.jsonl")[-1]  # the seal's
    forged = checkpoint.Checkpoint(point.seq, point.hash, point.at, point.key,
                                   123)  # type: ignore[arg-type]  # as a bundle's JSON holds
    problem = checkpoint.check([forged], (root / checkpoint.PUBLIC).read_bytes(),
                               lambda seq: point.hash, point.seq)
    assert problem == f"checkpoint 1 (event {point.seq}) has an invalid signature"


def test_rewriting_store_json_does_not_sign_over_removed_checkpoints(cut: Path) -> None:
    """Deleting store.json as well made the next writing command (Store.create writes it
    again) sign the cut head with the store's own key."""
    (cut / "store.json").unlink()
    store = Store.create(cut)  # what `roads ingest` and every writing command do first
    assert (cut / "store.json").exists()
    assert not (cut / "checkpoints" / "checkpoints.jsonl").exists()
    details = _uncovered(cut)
    assert details and all("no checkpoint at all" in d for d in details), details
    assert store.purpose == ""  # nothing vouches for the file written now


def test_a_journal_cut_to_one_seal_is_not_signed_by_the_start_up_sweep(
        tmp_path: Path) -> None:
    """Cut back to its first seal, with the checkpoint file deleted, the journal holds one
    file event: the start-up sweep (``seal_pending`` signs a write killed before its
    checkpoint) signed it as a store's first write, and verify then found nothing. A store
    is signed at its creation, so no checkpoint at all over a journal with events means
    they were removed: nothing signs, verify and ``serve`` name it."""
    from click.testing import CliRunner

    from roads.cli import main

    floor = Floor(tmp_path / "store")
    for shoe in ("S1", "S2"):
        floor.open_shoe("T1", shoe)
        floor.coups("T1", "BPPBT")
        floor.close("T1")
    root = floor.store.root
    _cut_to_seals(root, 1)
    store = Store.open(root)
    assert store.seal_pending() == []  # what `serve` runs at start-up
    assert store.sign_head() is None
    assert not (root / "checkpoints" / "checkpoints.jsonl").exists()
    [detail] = _uncovered(root)
    assert "no checkpoint at all" in detail
    result = CliRunner().invoke(main, ["serve", "--store", str(root), "--port", "1"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.count("\n") == 1 and "no signed checkpoint" in result.output


def test_a_store_of_accounts_only_from_before_signed_creation_verifies_and_serves(
        tmp_path: Path) -> None:
    """b59cfcd made a store unsigned and `roads users add` wrote no checkpoint: the usual
    install (add the first user, then serve) left a journal of one account event and no
    checkpoint. Refusing every journal with events and no checkpoint made such a store
    fail verify and `serve` for good (review6); only file events need a checkpoint."""
    import shutil

    root = tmp_path / "store"
    shutil.copytree(Path(__file__).parent / "data" / "b59cfcd-accounts-store", root)
    assert not (root / "checkpoints").exists()
    store = Store.open(root)
    assert [e.kind for e in store.journal.events()] == ["user_added"]
    assert store.unsigned_reason() is None  # what `serve` asks before it starts
    report = verify(store)
    assert report.ok, report.problems
