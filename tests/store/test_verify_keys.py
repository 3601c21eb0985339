"""The distinct shoes of a coups file as `roads store verify` reads them (dictionary indices,
run heads, then strings) against polars' own distinct rows, whatever the row order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from roads.store.verify import _distinct_keys

_KEY = st.tuples(st.sampled_from(["T1", "T2", "tå", ""]),
                 st.one_of(st.none(), st.sampled_from(["S1", "S2", "S10", "x\x1fy"])))


@settings(max_examples=60, deadline=None)
@given(st.lists(_KEY, max_size=40), st.integers(1, 7))
def test_a_files_distinct_keys_are_polars_distinct_rows(tmp_path_factory: pytest.TempPathFactory,
                                                        rows: list[tuple[str, str | None]],
                                                        group: int) -> None:
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String},
                         orient="row")
    path = tmp_path_factory.mktemp("keys") / "coups.parquet"
    pq.write_table(frame.to_arrow(), path, row_group_size=group)
    found = []
    with pq.ParquetFile(path, read_dictionary=["table_id", "shoe_id"]) as f:
        for i in range(f.num_row_groups):
            table = f.read_row_group(i, columns=["table_id", "shoe_id"])
            assert isinstance(table.column("shoe_id").type, pa.DictionaryType)
            found.append(_distinct_keys(table).with_columns(pl.all().cast(pl.String)))
    got = pl.concat(found).unique() if found else frame.clear()
    want = frame.unique()
    assert got.sort(pl.all(), nulls_last=True).equals(want.sort(pl.all(), nulls_last=True))


#: A fresh ``roads store verify`` (as the console command runs it), then whether the garbage
#: collector is on again and which of the modules it has no use for were loaded.
_LOADED = """
import gc, sys
from roads.cli import _invoke
code = _invoke(["store", "verify", "--quiet", "--store", sys.argv[1]])
print("LOADED", code, gc.isenabled(),
      *(m for m in ("pyarrow.compute", "pandas") if m in sys.modules))
"""


def test_a_fresh_verify_loads_neither_pyarrow_compute_nor_pandas(tmp_path: Path) -> None:
    """The files' keys go to polars through the Arrow C data interface: ``pl.from_arrow``
    imported ``pyarrow.compute`` for them (30-50 ms of a fresh verify's CPU time). The
    collector, off while the command imports the data stack, is on again for the checks."""
    root = tmp_path / "store"
    write_simulation(Simulation(get_rules("standard-8"), shoes=6, seed=2, tables=2,
                                batch_shoes=3), Store.create(root))
    done = subprocess.run([sys.executable, "-c", _LOADED, str(root)], capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines()[-1] == "LOADED 0 True"
