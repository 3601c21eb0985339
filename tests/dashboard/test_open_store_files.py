"""The check before a fork names the store's own open files, and only those: a log file
beside the store (``/srv/store.log`` next to ``/srv/store``) once stopped ``roads serve``."""

from __future__ import annotations

from pathlib import Path

from dashboard.workers import open_store_files


def test_only_files_under_the_store_count(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (root / "coups").mkdir(parents=True)
    beside, inside = tmp_path / "store.log", root / "coups" / "x.parquet"
    with beside.open("w"), inside.open("w"):
        found = open_store_files(root)
    assert str(inside) in found and str(beside) not in found
    assert open_store_files(root) == []
