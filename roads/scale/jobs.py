"""The per-batch functions both engines run: whole shoes in, per-shoe rows out.

Each takes the rows of whole shoes — a stored part file, read where the task runs by the
store's read port (the usual case, on both engines), or coups the driver already read from
the port (corrected files, open shoes, a shoe cut across files) — and returns per-shoe rows
in the local engine's own types; on Spark they travel back as compressed Arrow IPC blobs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from roads.board.board import LeadingTies
from roads.board.bulk import shoe_roads, table_roads
from roads.errors import InputError
from roads.schema import SchemaError, conform
from roads.stats.partials import COUNT_COLUMNS, Partial, partial, with_rules
from roads.stats.sequence import MAX_RUN, SequenceStats
from roads.store import outcome_columns, statistics_columns

SEQ_COLUMNS = ["seq_banker", "seq_player", "seq_runs", "seq_longest_banker",
               "seq_longest_player"]
LAGS = 5

#: What every Spark task returns: one Arrow IPC stream per batch of shoes, as a binary
#: value. Spark moves the bytes without converting the rows to its own format and back
#: (that conversion cost more than computing the roads), and the result keeps the exact
#: types the local engine produces.
RESULT_DDL = "arrow binary"


def to_blob(table: pa.Table) -> pa.RecordBatch:
    """``table`` as a one-row batch of :data:`RESULT_DDL`."""
    sink = pa.BufferOutputStream()
    # zstd: the per-shoe rows shrink ~8x, and the bytes cross two process boundaries.
    with pa.ipc.new_stream(sink, table.schema,
                           options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(table)
    return pa.record_batch([pa.array([sink.getvalue().to_pybytes()], pa.binary())],
                           names=["arrow"])


def from_blobs(result: pa.Table, empty: pl.DataFrame) -> pl.DataFrame:
    """The rows of every task's blob, in one frame (``empty`` gives the schema of none)."""
    frames = []
    for blob in result.column("arrow").to_pylist():
        frame = pl.from_arrow(pa.ipc.open_stream(blob).read_all())
        assert isinstance(frame, pl.DataFrame)
        frames.append(frame)
    return pl.concat(frames) if frames else empty


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


def roads_job(table: pa.Table, leading_ties: LeadingTies = "first-cell") -> pa.Table:
    """Per-shoe roads of the shoes in ``table``."""
    return shoe_roads(canonical_coups(table), leading_ties).to_arrow()


def stats_job(table: pa.Table) -> pa.Table:
    """Per-shoe statistics partial rows: counts, time span and the sequence sums."""
    return _stats_rows(partial(canonical_coups(table), None))


def stats_file(path: str) -> pa.Table:
    """:func:`stats_job` of one stored part file, read by the store's read port as the
    local engine reads it (scalars, and the card lists only counted)."""
    return _stats_rows(partial(statistics_columns(Path(path)), None))


def stats_frame(frame: pl.DataFrame) -> pa.Table:
    """:func:`stats_job` of coups already read (statistics columns or canonical)."""
    return _stats_rows(partial(frame, None))


def roads_file(path: str, leading_ties: LeadingTies = "first-cell") -> pa.Table:
    """Per-shoe roads of one stored part file, read by the store's read port."""
    return table_roads(outcome_columns(Path(path)), leading_ties)


def _stats_rows(part: Partial) -> pa.Table:
    by_shoe = part.by_shoe
    seq = part.sequence
    # Sequence sums are per batch: attached to the batch's first row (combining sums them).
    first = pl.int_range(pl.len()) == 0
    frame = by_shoe.with_columns(
        *(pl.Series(c, seq.per_shoe[:, i]) for i, c in enumerate(SEQ_COLUMNS)),
        pl.when(first).then(pl.lit(seq.hist.ravel().tolist(), dtype=pl.List(pl.Int64)))
        .alias("hist"),
        pl.when(first).then(pl.lit(seq.lag_sums.ravel().tolist(), dtype=pl.List(pl.Int64)))
        .alias("lags"),
    ).cast({c: pl.Int64 for c in [*COUNT_COLUMNS, "span_us", *SEQ_COLUMNS]})
    return frame.to_arrow()


#: The per-shoe statistics rows of no shoe.
STATS_ROWS = pl.DataFrame(schema={
    "table_id": pl.String, "shoe_id": pl.String, **{c: pl.Int64 for c in COUNT_COLUMNS},
    "span_us": pl.Int64, **{c: pl.Int64 for c in SEQ_COLUMNS}, "hist": pl.List(pl.Int64),
    "lags": pl.List(pl.Int64)})


def partial_from_rows(rows: pl.DataFrame, shoes: pl.DataFrame) -> Partial:
    """The :class:`~roads.stats.partials.Partial` of collected per-shoe rows."""
    by_shoe = rows.select("table_id", "shoe_id", *COUNT_COLUMNS, "span_us")
    hist = np.array(rows["hist"].drop_nulls().to_list(), dtype=np.int64).reshape(
        -1, 2 * (MAX_RUN + 1)).sum(axis=0)
    lags = np.array(rows["lags"].drop_nulls().to_list(), dtype=np.int64).reshape(
        -1, LAGS * 4).sum(axis=0)
    return with_rules(Partial(by_shoe, SequenceStats(
        hist.reshape(2, MAX_RUN + 1), rows.select(SEQ_COLUMNS).to_numpy().astype(np.int64),
        lags.reshape(LAGS, 4))), shoes)
