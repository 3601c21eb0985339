"""`roads ingest` of a directory or a named pipe says what the path is (before, both were
"no such file", which the directory beside it contradicts), exit 2 in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main


@pytest.mark.parametrize(("make", "words"), [
    (lambda p: p.mkdir(), "is a directory; name the files in it"),
    (lambda p: os.mkfifo(p), "is not a regular file (a pipe or a device)"),
    (lambda p: None, "no such file"),
])
def test_a_path_that_is_no_file_is_named_for_what_it_is(tmp_path: Path, make: object,
                                                        words: str) -> None:
    target = tmp_path / "coups.csv"
    make(target)  # type: ignore[operator]
    result = CliRunner().invoke(main, ["ingest", str(target), "--store", str(tmp_path / "s")])
    assert result.exit_code == 2
    [line] = [ln for ln in result.output.splitlines() if ln.startswith("roads: error")]
    assert line.startswith(f"roads: error: {target}: {words}")
