"""A signing key that is not the store's is refused before anything is signed or written.

Before, a replaced ``keys/store-ed25519.pem`` signed every later checkpoint (and export)
with a key the store's recorded public key does not verify: nothing said so until ``store
verify`` named the checkpoints as invalid signatures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from roads.cli import main
from roads.errors import SigningKeyMismatch
from roads.store import Store, checkpoint
from roads.store.verify import verify
from tests.floor import Floor

CHECKPOINTS = Path(checkpoint.DIRECTORY) / checkpoint.FILE


def replace_private_key(root: Path) -> None:
    """Another Ed25519 key in the store's private key file (a new file renamed over it, as
    a restore from another machine would leave it)."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    new = root / "keys" / "other.pem"
    new.write_bytes(pem)
    new.chmod(0o600)
    os.replace(new, root / checkpoint.PRIVATE)


@pytest.fixture
def floor(tmp_path: Path) -> Floor:
    floor = Floor(tmp_path / "store").sealed_shoe("T1", "S1", "BPB")
    floor.open_shoe("T1", "S2")
    floor.coups("T1", "PP")
    return floor


def test_a_seal_with_another_key_is_refused_before_it_writes(floor: Floor) -> None:
    root = floor.store.root
    replace_private_key(root)
    points = (root / CHECKPOINTS).read_bytes()
    with pytest.raises(SigningKeyMismatch, match=r"keys/store-ed25519\.pem") as refused:
        floor.close("T1")
    assert "not the private half" in str(refused.value)
    assert refused.value.key_file == checkpoint.PRIVATE
    assert (root / CHECKPOINTS).read_bytes() == points  # nothing signed
    assert floor.store.unsealed_closed() == [("T1", "S2")]  # the seal journaled nothing
    assert not list((root / "coups").rglob("*S2*"))  # and left no file
    assert verify(Store.open(root)).ok  # what is there still verifies


def test_signing_the_head_with_another_key_is_refused(floor: Floor) -> None:
    root = floor.store.root
    replace_private_key(root)
    with pytest.raises(SigningKeyMismatch, match="recorded public key"):
        floor.store.checkpoint()
    assert verify(Store.open(root)).ok


def test_the_store_own_key_still_signs(floor: Floor) -> None:
    before = len((floor.store.root / CHECKPOINTS).read_text().splitlines())
    floor.close("T1")
    assert len((floor.store.root / CHECKPOINTS).read_text().splitlines()) == before + 1
    assert verify(floor.store).ok


def test_export_and_ingest_refuse_in_one_line_with_exit_2(floor: Floor,
                                                          tmp_path: Path) -> None:
    root = floor.store.root
    replace_private_key(root)
    runner = CliRunner()
    export = runner.invoke(main, ["export", "--store", str(root), "--table", "T1", "--shoe",
                                  "S1", "--out", str(tmp_path / "bundle"), "--quiet"])
    assert export.exit_code == 2, export.output
    [line] = export.output.strip().splitlines()
    assert line.startswith("roads: error: refusing to sign") and "store-ed25519.pem" in line
    assert not (tmp_path / "bundle").exists() or not any((tmp_path / "bundle").iterdir())
    csv = tmp_path / "coups.csv"
    csv.write_text("table,shoe,coup,outcome\nT9,s1,1,B\n")
    ingest = runner.invoke(main, ["ingest", str(csv), "--store", str(root)])
    assert ingest.exit_code == 2, ingest.output
    assert "store-ed25519.pem" in ingest.output
    assert verify(Store.open(root)).ok


def test_serve_refuses_a_store_whose_key_is_not_its_own(floor: Floor) -> None:
    root = floor.store.root
    replace_private_key(root)
    result = CliRunner().invoke(main, ["serve", "--store", str(root), "--port", "1"])
    assert result.exit_code == 2, result.output
    assert "refusing to sign" in result.output and "store-ed25519.pem" in result.output


def test_a_missing_key_file_is_refused_in_one_line_naming_it(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    (store.root / checkpoint.PUBLIC).unlink()
    with pytest.raises(SigningKeyMismatch) as caught:
        checkpoint.signing_key(store.root)
    assert caught.value.key_file == checkpoint.PUBLIC and checkpoint.PUBLIC in str(caught.value)


def test_a_lost_private_key_is_not_replaced_by_a_new_pair(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "s")
    public = (store.root / checkpoint.PUBLIC).read_bytes()
    (store.root / checkpoint.PRIVATE).unlink()
    result = CliRunner().invoke(main, ["simulate", "--shoes", "1", "--seed", "1",
                                       "--out", str(store.root)])
    assert result.exit_code == 2, result.output
    assert checkpoint.PRIVATE in result.output
    assert (store.root / checkpoint.PUBLIC).read_bytes() == public
    assert not (store.root / checkpoint.PRIVATE).exists()
