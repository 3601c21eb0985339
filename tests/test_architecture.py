"""The architecture is enforced: pure cores import no shell, only the store reads coup
files, the dashboard goes through the service, every package names its public names, and
no two modules share a name."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.architecture import check

ROOT = Path(__file__).resolve().parents[1]


def test_the_code_keeps_the_rules() -> None:
    assert [str(v) for v in check(ROOT)] == []


def test_each_rule_fails_on_a_deliberately_bad_module(tmp_path: Path) -> None:
    for package in ("roads", "dashboard"):
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    bad = {
        "roads/board/shortcut.py": "from roads.store import Store\n",
        "roads/stats/peek.py": "import polars as pl\n\n\ndef f():\n    "
                               "return pl.read_parquet('coups/x.parquet')\n",
        "dashboard/fast.py": "from roads.store.read import Reader\n",
        "roads/audit/inside.py": "from roads.store.catalog import files\n",
        "roads/ingest/newpkg/__init__.py": "X = 1\n",
        "roads/scale/store.py": "",
    }
    for name, text in bad.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = [str(v) for v in check(tmp_path)]
    expected = [
        "roads.board.shortcut:1: a pure core imports the shell roads.store",
        "roads.stats.peek:5: reads Parquet files: only the store reads coup files",
        "dashboard.fast:1: the dashboard reaches the store (roads.store.read) instead of the "
        "service",
        "dashboard.fast:1: imports the store's internals (roads.store.read)",
        "roads.audit.inside:1: imports the store's internals (roads.store.catalog)",
        "roads.ingest.newpkg:1: a package declares its public names (__all__)",
    ]
    for line in expected:
        assert line in found, (line, found)
    assert any("the module name 'store' is used twice" in f for f in found)
    assert len(found) == len(expected) + 1
