"""The canonical coup schema, version 2: the one shape every source converts into.

Roads, statistics, the dashboard and exports read only these two tables. Closed sets are
``pl.Enum`` so a stray label cannot enter; cards are stored as canonical codes (``As``).
Every other list of fields (the ingest fields, the API models, the content compared to tell
whether two coups are the same) is derived from the dictionaries here. See
``docs/schema.md`` for the meaning of every column.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from roads.cards import CARD_CODES
from roads.errors import InputError
from roads.tableau import OUTCOMES

SCHEMA_VERSION = 2

Card = pl.Enum(list(CARD_CODES))
Outcome = pl.Enum(list(OUTCOMES))
#: Where a coup comes from: a live table, the engine, an imported file, the demo dealers.
SOURCES = ("live", "engine", "import", "demo")
Source = pl.Enum(list(SOURCES))
#: How it was entered: the operator's keypad or typed cards, the HTTP API by another system,
#: a card-reading shoe, a file import, the engine, the demo dealers.
ENTRY_METHODS = ("keypad", "cards", "api", "shoe", "import", "engine", "demo")
Entry = pl.Enum(list(ENTRY_METHODS))
#: The source each entry method belongs to.
ENTRY_SOURCE = {"keypad": "live", "cards": "live", "api": "live", "shoe": "live",
                "import": "import", "engine": "engine", "demo": "demo"}
Timestamp = pl.Datetime("us", "UTC")

COUPS: dict[str, pl.DataType] = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "coup": pl.Int32(),
    "outcome": Outcome,
    "player_cards": pl.List(Card),
    "banker_cards": pl.List(Card),
    "player_total": pl.Int8(),
    "banker_total": pl.Int8(),
    "natural": pl.Boolean(),
    "player_pair": pl.Boolean(),
    "banker_pair": pl.Boolean(),
    "dealt_at": Timestamp,
    "source": Source,
    "entry": Entry,
    "entered_by": pl.String(),
}

SHOES: dict[str, pl.DataType] = {
    "table_id": pl.String(),
    "shoe_id": pl.String(),
    "rules": pl.String(),
    "decks": pl.Int8(),
    "burn_cards": pl.List(Card),
    "cut_card_index": pl.Int16(),
    "coups": pl.Int16(),
    "cards_dealt": pl.Int16(),
    "started_at": Timestamp,
    "ended_at": Timestamp,
    "seed": pl.UInt64(),
    "source": Source,
}

TABLES: dict[str, dict[str, pl.DataType]] = {"coups": COUPS, "shoes": SHOES}

#: What names a coup, and a shoe.
COUP_KEY = ("table_id", "shoe_id", "coup")
#: A coup's cards as six fixed-width columns (what the integrity checks read, one byte a
#: card): each card's index in :data:`~roads.cards.CARD_CODES`, :data:`NO_CARD` where the
#: hand has no such card.
CARD_SLOTS = ("player_1", "player_2", "player_3", "banker_1", "banker_2", "banker_3")
NO_CARD = 255
SHOE_KEY = ("table_id", "shoe_id")
#: What a coup *is*: two coups under one key are the same coup when these are equal (nulls
#: equal), whoever entered them and whenever. The one definition of idempotency and
#: conflicts, for live entry and imports alike.
CONTENT = tuple(c for c in COUPS if c not in (*COUP_KEY, "dealt_at", "source", "entry",
                                               "entered_by"))
#: What a source may give for a coup (the fields an ingest file or an API client names).
ENTRY_FIELDS = tuple(c for c in COUPS if c not in ("source", "entry", "entered_by"))

#: Table and shoe ids: 1-64 characters, letters and digits of any script, ``. _ : # -`` and
#: inner spaces. No control characters, no ``/`` (ids are URL path segments), no ``*`` (the
#: journal's system pseudo-table).
ID_MAX = 64
ID_PATTERN = r"^[\w.:#-](?:[\w .:#-]{0,62}[\w.:#-])?$"


def max_coups(decks: int) -> int:
    """The most coups a shoe of ``decks`` decks can deal: four cards each, no burn."""
    return decks * 52 // 4


def same_coup(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two canonical coup records hold the same coup (:data:`CONTENT`)."""
    return all(_norm(a.get(c)) == _norm(b.get(c)) for c in CONTENT)


def _norm(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def same_content() -> pl.Expr:
    """:func:`same_coup` as a polars expression over ``c`` and ``c_stored`` columns."""
    return pl.all_horizontal([pl.col(c).eq_missing(pl.col(f"{c}_stored")) for c in CONTENT])


class SchemaError(InputError):
    """A frame that cannot be made canonical (missing or unconvertible column)."""


def schema(table: str) -> pl.Schema:
    """The polars schema of a canonical table (``coups`` or ``shoes``)."""
    try:
        return pl.Schema(TABLES[table])
    except KeyError:
        raise SchemaError(f"unknown canonical table {table!r}") from None


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The canonical Arrow schema, carrying polars' Enum metadata so Enums round-trip."""
    return pl.DataFrame(schema=schema(table)).to_arrow().schema


def conform(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """Select and cast ``frame`` to the canonical column order and types.

    Missing nullable columns are filled with nulls; a column that cannot be cast raises
    :class:`SchemaError` naming it, because a silently mangled column is worse than none.
    """
    target = schema(table)
    have = frame.schema
    if list(have.items()) == list(target.items()):
        return frame  # already canonical (most calls: the writers conform once, early)
    required = {"table_id", "shoe_id"} | ({"coup", "outcome"} if table == "coups" else set())
    missing = required - set(have)
    if missing:
        raise SchemaError(f"{table}: missing column(s) {', '.join(sorted(missing))}")
    columns = []
    for name, dtype in target.items():
        if name not in have:
            columns.append(pl.lit(None, dtype=dtype).alias(name))
        elif have[name] == dtype:
            columns.append(pl.col(name))
        else:
            columns.append(pl.col(name).cast(dtype, strict=True))
    try:
        return frame.select(columns)
    except (pl.exceptions.InvalidOperationError, pl.exceptions.ComputeError) as exc:
        raise SchemaError(f"{table}: {exc}") from None


def provenance(**items: Any) -> dict[str, str]:
    """Parquet key/value metadata: schema version plus the given items, as strings."""
    from roads import __version__

    meta = {"roads.schema_version": str(SCHEMA_VERSION), "roads.software_version": __version__}
    meta.update({f"roads.{k}": str(v) for k, v in items.items() if v is not None})
    return meta


def shoe_start(frame: pl.DataFrame) -> pl.Expr:
    """Boolean expression per row of ``frame``: does it start a new (table, shoe) run?

    Coups are kept shoe by shoe, so many passes need only these boundaries, never a hash of
    every key. Categorical keys (as read from Parquet dictionaries) compare by their integer
    codes, an order of magnitude faster than comparing strings.
    """
    types = frame.schema

    def key(name: str) -> pl.Expr:
        col = pl.col(name)
        return col.to_physical() if types[name] == pl.Categorical() else col

    return ((key("table_id") != key("table_id").shift(1))
            | (key("shoe_id") != key("shoe_id").shift(1))).fill_null(True)


def shoe_starts(frame: pl.DataFrame) -> np.ndarray:
    """:func:`shoe_start` of every row, as a numpy mask."""
    return frame.select(shoe_start(frame)).to_series().to_numpy()


def shoe_runs(frame: pl.DataFrame) -> np.ndarray | None:
    """:func:`shoe_starts` when every shoe is exactly one run of rows (as the writers and
    most exports keep them), so per-shoe work can go run by run; None when some shoe's rows
    are split into several runs."""
    return one_run_each(frame, shoe_starts(frame))


def one_run_each(frame: pl.DataFrame, starts: np.ndarray) -> np.ndarray | None:
    """``starts`` (runs of rows, each of one shoe) if no shoe has two of them, else None."""
    keys = frame.select("table_id", "shoe_id").filter(pl.Series(starts))
    return starts if keys.n_unique() == keys.height else None


def repeats_a_shoe(frame: pl.DataFrame) -> bool:
    """Whether some (table_id, shoe_id) is on two rows. Exact, and cheap when none is: keys
    with distinct 64-bit hashes are distinct, so only a repeated hash (a true repeat, or a
    rare collision) pays for comparing the keys themselves."""
    hashes = frame.select(pl.struct("table_id", "shoe_id").hash()).to_series()
    if not hashes.is_duplicated().any():
        return False
    return bool(frame.select(pl.struct("table_id", "shoe_id").is_duplicated().any()).item())


def rising_within_shoes(coup: np.ndarray, starts: np.ndarray) -> bool:
    """Whether coup numbers rise strictly inside every run of rows (``starts``)."""
    return len(coup) < 2 or bool((np.diff(coup)[~starts[1:]] > 0).all())


def grouped_by_shoe(frame: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """``frame`` with each shoe's rows together in rising coup order, and its
    :func:`shoe_starts`. Sorted only when it is not so already (as stored shoes are)."""
    starts = shoe_runs(frame)
    if starts is not None and rising_within_shoes(frame["coup"].to_numpy(), starts):
        return frame, starts
    frame = frame.sort("table_id", "shoe_id", "coup")
    return frame, shoe_starts(frame)
