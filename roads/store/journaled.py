"""A journaled shoe as canonical rows: its coups as entered and its shoe row.

The journal is the record of live shoes until they are sealed, and the reference a sealed
shoe's file is checked against (``roads store verify``), so both go through this one
conversion.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import polars as pl

from roads.schema import COUPS, TABLES, conform
from roads.store.journal import Event

#: Payload fields of a ``coup_entered`` event that are canonical coup columns.
COUP_FIELDS = tuple(c for c in COUPS if c not in ("table_id", "shoe_id", "entered_by"))
_OVERRIDES = {"dealt_at": pl.Datetime("us", "UTC"), "player_cards": pl.List(pl.String),
              "banker_cards": pl.List(pl.String)}


def parse_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def coup_row(e: Event) -> dict[str, Any]:
    """One ``coup_entered`` event as a canonical coup record."""
    p = e.payload
    row: dict[str, Any] = {"table_id": e.table_id, "shoe_id": e.shoe_id}
    for name in COUP_FIELDS:
        row[name] = p.get(name)
    row["dealt_at"] = parse_time(p.get("dealt_at"))
    row["entered_by"] = e.actor
    return row


def coups_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Canonical coups of records as :func:`coup_row` makes them."""
    if not rows:
        return pl.DataFrame(schema=COUPS)
    return _canonical(rows, "coups", _OVERRIDES)


def _canonical(rows: list[dict[str, Any]], table: str,
               overrides: dict[str, pl.DataType]) -> pl.DataFrame:
    """Records as a canonical table, built column by column through Arrow, whose
    conversion of Python lists and times is written in C (polars' own from a list of
    records took ~5 ms for a shoe's 80 coups, most of a seal's work). Records that do not
    convert that way — a payload of the wrong type, in a journal someone edited — take
    polars' path, so its errors are the ones given."""
    import pyarrow as pa

    columns = TABLES[table]
    try:
        arrow = pa.table({name: pa.array([r.get(name) for r in rows],
                                         type=_arrow_type(dtype))
                          for name, dtype in columns.items()})
    except (ValueError, TypeError, OverflowError):  # Arrow's errors derive from these
        return conform(pl.DataFrame(rows, schema_overrides=overrides,
                                    infer_schema_length=None), table)
    return conform(pl.from_arrow(arrow), table)  # type: ignore[arg-type]


def _arrow_type(dtype: pl.DataType) -> Any:
    """The loose Arrow type of a canonical column (text, 64-bit integers, UTC times),
    which :func:`~roads.schema.conform` then casts strictly, as for polars' frames."""
    import pyarrow as pa

    if isinstance(dtype, pl.Datetime):
        return pa.timestamp("us", tz="UTC")
    if isinstance(dtype, pl.List):
        return pa.large_list(pa.large_string())
    if dtype.is_integer():
        return pa.int64()
    if dtype == pl.Boolean():
        return pa.bool_()
    return pa.large_string()


def shoe_frames(events: list[Event]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical coups (as entered) and the shoe row of one journaled shoe."""
    opened = next(e for e in events if e.kind == "shoe_opened")
    rows = [coup_row(e) for e in events if e.kind == "coup_entered"]
    coups = coups_frame(rows)
    rule_set = opened.payload.get("rule_set") or {}
    cards = [len(r["player_cards"]) + len(r["banker_cards"]) for r in rows
             if r["player_cards"] is not None]
    times = [r["dealt_at"] for r in rows if r["dealt_at"] is not None]
    shoe = _canonical([{
        "table_id": opened.table_id, "shoe_id": opened.shoe_id,
        "rules": opened.payload["rules"], "decks": rule_set.get("decks"),
        "burn_cards": opened.payload.get("burn_cards"),
        "cut_card_index": opened.payload.get("cut_card_index"), "coups": len(rows),
        "cards_dealt": sum(cards) if len(cards) == len(rows) and rows else None,
        "started_at": min(times) if times else parse_time(opened.at),
        "ended_at": max(times) if times else None, "seed": None,
        "source": opened.payload.get("source", "live"),
    }], "shoes", {"burn_cards": pl.List(pl.String), "started_at": pl.Datetime("us", "UTC"),
                  "ended_at": pl.Datetime("us", "UTC")})
    return coups, shoe
