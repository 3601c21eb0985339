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
