"""A store or a bundle whose path holds ``[``, ``*`` or ``?`` is read as that path: polars
took such a path for a pattern, so a store made at ``st[1]`` ingested, then every read of
it failed ("expanded paths were empty") and ``store verify`` died with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from roads.audit.bundle import Slice, export_bundle, verify
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store
from roads.store.verify import verify as verify_store


@pytest.mark.parametrize("name", ["st[1]", "st*", "st?"])
def test_a_store_and_a_bundle_under_a_pattern_like_name(tmp_path: Path, name: str) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text("table,shoe,coup,result,player,banker\nT1,S1,1,P,9h Kd,5s 3c\n"
                   "T1,S1,2,B,2h 3d,7s Kc\n")
    (tmp_path / "st1").mkdir()  # (what st? or st* would also match)
    store = Store.create(tmp_path / name)
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    assert store.read.coups()["outcome"].cast(str).to_list() == ["P", "B"]
    assert store.read.shoes()["coups"].to_list() == [2]
    report = verify_store(store, deep=True)
    assert report.ok and report.coups == 2, report.first_of_each_kind()
    out = tmp_path / f"b{name}" / "bundle"
    manifest = export_bundle(store, Slice("T1", "S1"), out, "auditor")
    assert manifest["files"]["coups.parquet"]["rows"] == 2
    verify(out)
