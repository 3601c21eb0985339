"""The per-batch functions both engines run: Arrow table in, Arrow table out.

Each takes the rows of whole shoes (Spark hands one shoe per call after
``groupBy(table_id, shoe_id)``; the local engine hands whole files) and returns rows whose
schema is fixed in advance, so a cluster can run them without knowing anything else.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from roads.board.board import LeadingTies
from roads.board.bulk import shoe_roads
from roads.errors import InputError
from roads.schema import SchemaError, conform
from roads.stats.sequence import MAX_RUN, SequenceStats
from roads.stats.summary import COUNT_COLUMNS, Partial, partial, with_rules

SEQ_COLUMNS = ["seq_banker", "seq_player", "seq_runs", "seq_longest_banker",
               "seq_longest_player"]
LAGS = 5

#: Spark DDL of the per-shoe statistics rows.
STATS_DDL = ", ".join(
    ["table_id string", "shoe_id string", *(f"{c} long" for c in COUNT_COLUMNS),
     "span_us long", *(f"{c} long" for c in SEQ_COLUMNS), "hist array<long>",
     "lags array<long>"])

#: Spark DDL of the per-shoe roads rows (SHOE_ROADS in Spark types).
ROADS_DDL = ("table_id string, shoe_id string, leading_ties string, coups int, ties int, "
             "leading_tie_count int, columns int, column_lengths array<short>, "
             "entry_ties array<short>, big_eye_boy string, small_road string, "
             "cockroach_pig string, ask_banker string, ask_player string, "
             "longest_banker_run int, longest_player_run int, dragon_tails int")


def canonical_coups(table: pa.Table) -> pl.DataFrame:
    """Rows as Spark (or another reader) hands them, made canonical; a malformed row
    raises :class:`InputError` naming the shoe, instead of a silent mis-count."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    try:
        return conform(frame, "coups")
    except SchemaError as exc:
        where = ""
        if frame.height and "table_id" in frame.columns and "shoe_id" in frame.columns:
            where = f"shoe {frame['table_id'][0]}/{frame['shoe_id'][0]}: "
        raise InputError(f"malformed coups: {where}{exc}") from None


def spark_types(table: pa.Table) -> pa.Table:
    """Large strings and lists as Spark's Arrow types (string, list)."""
    return table.cast(pa.schema([
        (f.name, pa.string() if f.type == pa.large_string() else
         pa.list_(f.type.value_type) if pa.types.is_large_list(f.type) else f.type)
        for f in table.schema]))


def roads_job(table: pa.Table, leading_ties: LeadingTies = "first-cell") -> pa.Table:
    """Per-shoe roads of the shoes in ``table`` (Spark types: no large strings)."""
    return spark_types(shoe_roads(canonical_coups(table), leading_ties).to_arrow())


def stats_job(table: pa.Table) -> pa.Table:
    """Per-shoe statistics partial rows: counts, time span and the sequence sums."""
    part = partial(canonical_coups(table), None)
    by_shoe = part.by_shoe
    n = by_shoe.height
    seq = part.sequence
    # Sequence sums are per batch; one shoe per batch on Spark, so attach them to its row,
    # and to the first row of a bigger batch (combining sums them anyway).
    hist = [seq.hist.ravel().tolist()] + [[0] * seq.hist.size] * (n - 1)
    lags = [seq.lag_sums.ravel().tolist()] + [[0] * seq.lag_sums.size] * (n - 1)
    frame = by_shoe.with_columns(
        *(pl.Series(c, seq.per_shoe[:, i]) for i, c in enumerate(SEQ_COLUMNS)),
        pl.Series("hist", hist, dtype=pl.List(pl.Int64)),
        pl.Series("lags", lags, dtype=pl.List(pl.Int64)),
    ).cast({c: pl.Int64 for c in [*COUNT_COLUMNS, "span_us", *SEQ_COLUMNS]})
    return spark_types(frame.to_arrow())


def partial_from_rows(rows: pl.DataFrame, shoes: pl.DataFrame) -> Partial:
    """The :class:`~roads.stats.summary.Partial` of collected per-shoe rows."""
    by_shoe = rows.select("table_id", "shoe_id", *COUNT_COLUMNS, "span_us")
    hist = np.array(rows["hist"].to_list(), dtype=np.int64).sum(axis=0)
    lags = np.array(rows["lags"].to_list(), dtype=np.int64).sum(axis=0)
    return with_rules(Partial(by_shoe, SequenceStats(
        hist.reshape(2, MAX_RUN + 1), rows.select(SEQ_COLUMNS).to_numpy().astype(np.int64),
        lags.reshape(LAGS, 4))), shoes)
