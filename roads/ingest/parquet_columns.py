"""A Parquet file's coup columns as the staging text every reader gives, by their type.

The canonical schema (the engine's output, an export) has hands as lists of cards and
``dealt_at`` as a UTC Datetime; files from other tools write what a CSV would hold, and
those forms are read as the CSV path reads the same text: a hand as text (``"2s 8h"``) or a
list of point values (``[9, 4]``: value-level, as ``9,4`` in a CSV), ``dealt_at`` as
ISO-8601 text, a Date (midnight, UTC) or a Datetime in any time zone (a naive one taken as
UTC). A column of any other type stops the file with one line naming the file, the column,
its type and the types read (nothing is stored).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from roads.errors import InputError
from roads.ingest.labels import FIELDS

CARD_FIELDS = ("player_cards", "banker_cards")
_TEXT = (pl.String, pl.Categorical, pl.Enum, pl.Null)
_VALUES = (*_TEXT, pl.Boolean, pl.Decimal, pl.Float32, pl.Float64, pl.Int8, pl.Int16,
           pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)
_CARDS = (*_TEXT, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32,
          pl.UInt64)
_EXPECTED = {
    "cards": "a list of cards (List(String), as exported) or text such as '2s 8h'",
    "dealt_at": "Datetime, Date or ISO-8601 text",
    "value": "text, a number or a boolean",
}


def _is(dtype: object, kinds: tuple[type[pl.DataType], ...]) -> bool:
    return any(dtype == kind or isinstance(dtype, kind) for kind in kinds)


def _card_text(name: str, dtype: pl.DataType) -> pl.Expr | None:
    column = pl.col(name)
    if _is(dtype, _TEXT):
        return column.cast(pl.String)
    if isinstance(dtype, pl.List | pl.Array) and _is(dtype.inner, _CARDS):
        listed = column.arr.to_list() if isinstance(dtype, pl.Array) else column
        return listed.cast(pl.List(pl.String)).list.join(" ")
    return None


def _time_text(name: str, dtype: pl.DataType) -> pl.Expr | None:
    column = pl.col(name)
    if isinstance(dtype, pl.Datetime):
        utc = column.dt.convert_time_zone("UTC") if dtype.time_zone else column
        return utc.dt.to_string("%Y-%m-%dT%H:%M:%S%.6f+00:00")
    if dtype == pl.Date:
        return column.dt.to_string("%Y-%m-%d")
    return column.cast(pl.String) if _is(dtype, _TEXT) else None


def staged_columns(path: Path, schema: pl.Schema) -> list[pl.Expr]:
    """The file's coup fields as text (:class:`InputError` for a column of another type)."""
    out = []
    for name in FIELDS:
        if name not in schema:
            continue
        dtype = schema[name]
        kind = "cards" if name in CARD_FIELDS else "dealt_at" if name == "dealt_at" \
            else "value"
        text = _card_text(name, dtype) if kind == "cards" else \
            _time_text(name, dtype) if kind == "dealt_at" else \
            pl.col(name).cast(pl.String) if _is(dtype, _VALUES) else None
        if text is None:
            raise InputError(f"{path}: column {name} is {dtype}; expected {_EXPECTED[kind]} "
                             "(nothing was stored)")
        out.append(text.alias(name))
    return out
