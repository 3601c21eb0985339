"""The fast paths of validation and storing give what the general ones give.

Clean files take shortcuts (numbers read without stripping, shoes found as runs of rows);
these properties hold the shortcuts to the general answer on arbitrary, dirty input.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.ingest.validate import _whole_numbers, parse_times
from roads.store.store import _shoe_days

_NUMBERISH = st.one_of(st.none(), st.text(alphabet="0123456789 +-x.\t", max_size=6))


@settings(deadline=None)
@given(st.lists(_NUMBERISH, max_size=30))
def test_whole_numbers_match_the_stripped_reading(values: list[str | None]) -> None:
    column = pl.Series("coup", values, dtype=pl.String)
    parsed, unreadable = _whole_numbers(column)
    text = column.str.strip_chars()
    expected = text.cast(pl.Int64, strict=False)
    assert parsed.to_list() == expected.to_list()
    assert unreadable.tolist() == (expected.is_null() & text.is_not_null()
                                   & (text != "")).to_list()


def test_times_read_the_same_with_or_without_blanks() -> None:
    clean = ["2026-01-01T00:00:00Z", "2026-01-01T23:59:59Z", None]
    padded = [" 2026-01-01T00:00:00Z", "2026-01-01T23:59:59Z\t", ""]
    assert parse_times(pl.Series(padded)).to_list() == parse_times(pl.Series(clean)).to_list()
    assert parse_times(pl.Series(clean)).to_list()[:2] == [
        datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 23, 59, 59, tzinfo=UTC)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["T1", "T2"]), st.sampled_from(["S1", "S2", "S3"]),
                          st.one_of(st.none(), st.integers(0, 3 * 24 * 3600))),
                min_size=1, max_size=40),
       st.booleans())
def test_each_shoe_is_filed_under_its_first_day(rows: list[tuple[str, str, int | None]],
                                                grouped: bool) -> None:
    start = datetime(2026, 3, 1, 22, tzinfo=UTC)
    if grouped:  # as exports list them: shoe by shoe (the run path)
        rows = sorted(rows, key=lambda r: (r[0], r[1]))
    coups = pl.DataFrame(
        {"table_id": [r[0] for r in rows], "shoe_id": [r[1] for r in rows],
         "dealt_at": [None if r[2] is None else start + timedelta(seconds=r[2]) for r in rows]},
        schema={"table_id": pl.String, "shoe_id": pl.String,
                "dealt_at": pl.Datetime("us", "UTC")})
    row_days, shoe_days = _shoe_days(coups)
    first = pl.col("dealt_at").min().dt.date()
    assert row_days.to_list() == coups.select(first.over("table_id", "shoe_id")).to_series() \
        .to_list()
    expected = coups.group_by("table_id", "shoe_id").agg(first.alias("day"))
    assert shoe_days.sort("table_id", "shoe_id").rows() == \
        expected.sort("table_id", "shoe_id").rows()
