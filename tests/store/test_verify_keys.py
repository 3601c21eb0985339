"""The distinct shoes of a coups file as `roads store verify` reads them (dictionary indices,
run heads, then strings) against polars' own distinct rows, whatever the row order."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
