"""``roads ingest`` refuses a path before it writes anything: a named file that is missing,
a directory or not a regular file, or a store path under a file, exits 2 with one line and
leaves no store directory behind (before, the store was made first, then the file refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main


@pytest.mark.parametrize("named", ["missing.csv", "folder"])
def test_a_refused_input_file_makes_no_store(tmp_path: Path, named: str) -> None:
    (tmp_path / "folder").mkdir()
    store = tmp_path / "new-store"
    result = CliRunner().invoke(main, ["ingest", str(tmp_path / named), "--store", str(store)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.count("\n") == 1 and named in result.output
    assert not store.exists()


def test_a_store_path_under_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    source = tmp_path / "coups.csv"
    source.write_text("table_id,shoe_id,coup,outcome\nT1,S1,1,B\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = CliRunner().invoke(main, ["ingest", str(source), "--store",
                                       str(blocker / "store")])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.output.count("\n") == 1 and "a-file" in result.output
    assert blocker.read_text() == "" and sorted(p.name for p in tmp_path.iterdir()) == \
        ["a-file", "coups.csv"]


def test_a_later_file_refused_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    """The first file's parts were written when the second stopped the run (exit 2, nothing
    committed); they stayed on disk until the next run, and ``store verify`` failed
    meanwhile ("no committed journal event names this file"). A failed run now removes
    what it wrote."""
    from roads.store import Store
    from roads.store.layout import walk
    from roads.store.verify import verify

    store = tmp_path / "store"
    first = tmp_path / "first.csv"
    first.write_text("table_id,shoe_id,coup,outcome\nT1,S1,1,B\n")
    assert CliRunner().invoke(main, ["ingest", str(first), "--store", str(store)]
                              ).exit_code == 0
    before = sorted(walk(store).parts)
    good, bad = tmp_path / "good.csv", tmp_path / "utf16.csv"
    good.write_text("table_id,shoe_id,coup,outcome\nT2,S1,1,P\nT2,S1,2,B\n")
    bad.write_bytes("table_id,shoe_id,coup,outcome\n".encode("utf-16"))
    result = CliRunner().invoke(main, ["ingest", str(good), str(bad), "--store", str(store)])
    assert result.exit_code == 2 and "utf16.csv" in result.output
    assert sorted(walk(store).parts) == before  # (the good file's parts went too)
    report = verify(Store.open(store))
    assert report.ok, report.first_of_each_kind()
    assert Store.open(store).read.coups().height == 1


def test_a_checkpoint_that_cannot_be_written_says_the_import_is_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import committed, then its checkpoint could not be written (an unwritable
    checkpoints directory): it exited 2 with only the permission error, as if nothing were
    stored, and a retry said "already ingested". Now it exits 1 saying the import is
    committed and unsigned, and the store's next write signs it."""
    from roads.store import Store, checkpoint
    from roads.store.verify import verify

    store = tmp_path / "store"
    first = tmp_path / "first.csv"
    first.write_text("table_id,shoe_id,coup,outcome\nT1,S1,1,B\n")
    assert CliRunner().invoke(main, ["ingest", str(first), "--store", str(store)]
                              ).exit_code == 0
    real = checkpoint.write

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(store / "checkpoints"))

    monkeypatch.setattr(checkpoint, "write", refused)
    second = tmp_path / "second.csv"
    second.write_text("table_id,shoe_id,coup,outcome\nT2,S1,1,P\n")
    result = CliRunner().invoke(main, ["ingest", str(second), "--store", str(store)])
    assert result.exit_code == 1, result.output
    assert "import_committed is committed (journal event" in result.output
    assert "Permission denied" in result.output and result.output.count("\n") == 1
    assert Store.open(store).read.coups().height == 2  # (stored: what the line says)
    assert not verify(Store.open(store)).ok  # (unsigned, and named so)
    monkeypatch.setattr(checkpoint, "write", real)
    third = tmp_path / "third.csv"
    third.write_text("table_id,shoe_id,coup,outcome\nT3,S1,1,T\n")
    assert CliRunner().invoke(main, ["ingest", str(third), "--store", str(store)]
                              ).exit_code == 0
    report = verify(Store.open(store))
    assert report.ok, report.first_of_each_kind()


@pytest.mark.parametrize("why", ["map", "header", "rules"])
def test_an_input_refused_after_the_store_is_made_leaves_no_store(tmp_path: Path,
                                                                  why: str) -> None:
    """A missing --map column, a repeated header or an unknown rule set is found once the
    store exists: the store this command made is removed again (it held nothing)."""
    source = tmp_path / "coups.csv"
    header = "table_id,shoe_id,coup,outcome,outcome" if why == "header" else \
        "table_id,shoe_id,coup,outcome"
    source.write_text(header + "\nT1,S1,1,B" + (",P" if why == "header" else "") + "\n")
    args = {"map": ["--map", "outcome=Winner"], "header": [],
            "rules": ["--rules", "no-such-rules"]}[why]
    store = tmp_path / "new-store"
    result = CliRunner().invoke(main, ["ingest", str(source), "--store", str(store), *args])
    assert result.exit_code == 2, result.output
    assert not store.exists()
    existing = tmp_path / "kept"
    good = tmp_path / "good.csv"
    good.write_text("table_id,shoe_id,coup,outcome\nT1,S1,1,B\n")
    assert CliRunner().invoke(main, ["ingest", str(good), "--store", str(existing)]
                              ).exit_code == 0
    again = CliRunner().invoke(main, ["ingest", str(source), "--store", str(existing), *args])
    assert again.exit_code == 2 and existing.is_dir()  # (a store it did not make stays)
