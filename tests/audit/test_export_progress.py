"""The export's progress bar counts each exported coup once (issue 17 saw it count double)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roads.audit.bundle import Slice, export_bundle
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store


@pytest.mark.parametrize("formats", [(), ("pdf",)])
def test_the_bar_ends_at_the_number_of_coups_exported(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      formats: tuple[str, ...]) -> None:
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=3, seed=4), store)
    manifest = export_bundle(store, Slice(table_id="SIM-01"), tmp_path / "bundle", "auditor",
                             formats=formats, progress=True)
    coups = manifest["files"]["coups.csv"]["rows"]
    assert coups == store.read.coups().height > 81
    renders = re.findall(r"export:\s+\d+%\|[^|]*\|\s*([\d.]+)/([\d.]+)",
                         capsys.readouterr().err)
    done, total = (float(x) for x in renders[-1])
    assert done == total == coups
