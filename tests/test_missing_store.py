"""Read commands need a store: a mistyped path is an error (exit 2, ``no store at PATH``)
and nothing is created; commands that write make the store."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from roads.cli import main

READS = [
    ["summary"], ["board", "--table", "T1", "--shoe", "S1"], ["stats"],
    ["stats", "--table", "T1"], ["check"], ["export", "--shoe", "S1", "--out", "{tmp}/b"],
    ["audit"], ["store", "info"], ["store", "verify"], ["store", "compact"],
    ["purge", "--before", "2000-01-01"], ["batch", "roads", "--out", "{tmp}/r"],
    ["batch", "stats", "--out", "{tmp}/r"], ["serve", "--port", "65500"],
    ["users", "list"], ["users", "key", "--table", "T1"],
]


@pytest.mark.parametrize("args", READS, ids=[" ".join(a[:2]) for a in READS])
def test_a_read_on_a_missing_store_exits_2_and_creates_nothing(tmp_path: Path,
                                                                args: list[str]) -> None:
    typo = tmp_path / "stroe"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = CliRunner().invoke(main, [*argv, "--store", str(typo)])
    assert result.exit_code == 2, result.output
    assert f"no store at {typo}" in result.output
    assert result.output.count("\n") == 1  # one line, no traceback
    assert not typo.exists()


def test_writes_make_the_store(tmp_path: Path) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result\nT1,S1,1,B\n")
    for n, args in enumerate((["ingest", str(csv)], ["simulate", "--shoes", "1", "--quiet"])):
        store = tmp_path / f"s{n}"
        where = "--out" if args[0] == "simulate" else "--store"
        result = CliRunner().invoke(main, [*args, where, str(store)])
        assert result.exit_code == 0, result.output
        assert (store / "journal.sqlite").is_file()
    users = CliRunner().invoke(main, ["users", "add", "ana", "--role", "dealer",
                                      "--password-stdin", "--store", str(tmp_path / "u")],
                               input="long enough secret\n")
    assert users.exit_code == 0 and (tmp_path / "u" / "journal.sqlite").is_file()
