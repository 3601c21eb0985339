"""A seal's content digests and catalogue rows, made from the rows in plain Python, are
the vectorised ones of :mod:`roads.store.digest` and the store's shoe index, on any shoe."""

from __future__ import annotations

import io
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.cards import CARD_CODES
from roads.schema import ENTRY_METHODS, SOURCES, conform, provenance
from roads.store.digest import combine, shoe_digests, shoes_digest
from roads.store.journaled import arrow_part, coups_frame, sealed_content
from roads.store.store import _write, shoe_index_frame

TEXT = st.text(st.characters(codec="utf-8"), min_size=1,
               max_size=12)  # tabs, newlines, backslashes and other scripts included
MAYBE_TEXT = st.none() | TEXT
TIMES = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1),
                     timezones=st.just(UTC))
HANDS = st.none() | st.lists(st.sampled_from(CARD_CODES), min_size=2, max_size=3)
FLAGS = st.none() | st.booleans()
TOTALS = st.none() | st.integers(0, 9)


@st.composite
def shoes(draw: st.DrawFn) -> tuple[list[dict[str, Any]], pl.DataFrame]:
    table_id, shoe_id = draw(TEXT), draw(TEXT)
    numbers = sorted(draw(st.sets(st.integers(1, 500), min_size=1, max_size=12)))
    rows = [{"table_id": table_id, "shoe_id": shoe_id, "coup": n,
             "outcome": draw(st.sampled_from("BPT")), "player_cards": draw(HANDS),
             "banker_cards": draw(HANDS), "player_total": draw(TOTALS),
             "banker_total": draw(TOTALS), "natural": draw(FLAGS),
             "player_pair": draw(FLAGS), "banker_pair": draw(FLAGS),
             "dealt_at": draw(st.none() | TIMES), "source": draw(st.sampled_from(SOURCES)),
             "entry": draw(st.none() | st.sampled_from(ENTRY_METHODS)),
             "entered_by": draw(MAYBE_TEXT)} for n in numbers]
    shoe = conform(pl.DataFrame([{
        "table_id": table_id, "shoe_id": shoe_id, "rules": draw(MAYBE_TEXT),
        "decks": draw(st.none() | st.integers(1, 8)),
        "burn_cards": draw(st.none() | st.lists(st.sampled_from(CARD_CODES), max_size=11)),
        "cut_card_index": draw(st.none() | st.integers(0, 416)), "coups": len(rows),
        "cards_dealt": draw(st.none() | st.integers(0, 416)), "started_at": draw(TIMES),
        "ended_at": draw(st.none() | TIMES), "seed": draw(st.none() | st.integers(0, 2**64 - 1)),
        "source": draw(st.sampled_from(SOURCES))}], schema_overrides={
            "burn_cards": pl.List(pl.String), "seed": pl.UInt64}), "shoes")
    return rows, shoe


@settings(max_examples=150, deadline=None)
@given(shoes())
def test_a_seals_content_is_the_vectorised_one(
        shoe: tuple[list[dict[str, Any]], pl.DataFrame]) -> None:
    rows, row = shoe
    coups = coups_frame(rows)
    content = sealed_content(rows, row.row(0, named=True))
    assert content is not None
    of_coups, of_shoe = content
    assert of_coups.digest == combine(shoe_digests(coups))
    assert of_shoe.digest == shoes_digest(row)
    assert of_coups.shoes.equals(coups.select("table_id", "shoe_id").unique())
    assert of_coups.index is None
    assert of_shoe.shoes.is_empty()  # the catalogue lists the shoes of coups files only
    assert of_shoe.index is not None and of_shoe.index.equals(shoe_index_frame(row))


def _shoe(coups: list[int]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    rows: list[dict[str, Any]] = [
        {"table_id": "T", "shoe_id": "S", "coup": n, "outcome": "B", "player_cards": None,
         "banker_cards": None, "dealt_at": at + timedelta(seconds=n), "source": "live",
         "entry": "keypad", "entered_by": "dealer", "player_total": None,
         "banker_total": None, "natural": None, "player_pair": None, "banker_pair": None}
        for n in coups]
    shoe = conform(pl.DataFrame({"table_id": ["T"], "shoe_id": ["S"], "coups": [len(rows)],
                                 "started_at": [at]}), "shoes")
    return rows, shoe.row(0, named=True)


def test_what_is_not_one_shoe_in_coup_order_is_left_to_the_vectorised_digests() -> None:
    assert sealed_content(*_shoe([1, 2, 3])) is not None
    assert sealed_content(*_shoe([2, 1])) is None  # out of order
    assert sealed_content(*_shoe([1, 1])) is None  # a number twice
    assert sealed_content(*_shoe([])) is None  # no coups
    rows, shoe = _shoe([1, 2])
    assert sealed_content([rows[0], {**rows[1], "shoe_id": "S2"}], shoe) is None  # two shoes
    for edited in ({"natural": 1}, {"coup": 2.0}, {"player_cards": "AsKd"},
                   {"outcome": "Banker"}, {"player_total": 300}, {"dealt_at": "today"}):
        # a value of another type, in a journal someone edited: the vectorised path decides
        assert sealed_content([rows[0], {**rows[1], **edited}], shoe) is None


def _read_back(table: Any, name: str) -> pl.DataFrame:
    """A part file written from ``table`` as the store writes one, read as every reader
    reads it (polars)."""
    buffer = io.BytesIO(_encoded(table, name))
    return pl.read_parquet(buffer)


def _encoded(table: Any, name: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "part.parquet"
        _write(path, table, provenance(table=name, source="live"), durable=False)
        return path.read_bytes()


@settings(max_examples=100, deadline=None)
@given(shoes())
def test_a_seals_arrow_tables_are_read_back_as_the_canonical_frames(
        shoe: tuple[list[dict[str, Any]], pl.DataFrame]) -> None:
    rows, row = shoe
    coups = arrow_part(rows, "coups")
    shoes = arrow_part([row.row(0, named=True)], "shoes")
    assert coups is not None and shoes is not None
    for table, name, expected in ((coups, "coups", coups_frame(rows)), (shoes, "shoes", row)):
        back = _read_back(table, name)
        assert back.schema == expected.schema and back.equals(expected)
        # the same Arrow schema (field metadata included) as polars' own file of the frame
        assert pq.read_schema(io.BytesIO(_encoded(table, name))).remove_metadata() == \
            pq.read_schema(io.BytesIO(_encoded(expected, name))).remove_metadata()


def test_values_not_of_their_canonical_type_are_left_to_polars() -> None:
    rows, shoe = _shoe([1, 2])
    assert arrow_part(rows, "coups") is not None and arrow_part([shoe], "shoes") is not None
    for edited in ({"natural": 1}, {"coup": 2.0}, {"coup": True}, {"player_cards": "AsKd"},
                   {"player_cards": ["Xx", "As"]}, {"outcome": "Banker"},
                   {"player_total": 300}, {"dealt_at": "today"}, {"entered_by": 7},
                   {"source": "elsewhere"}):
        assert arrow_part([rows[0], {**rows[1], **edited}], "coups") is None
    assert arrow_part([{**shoe, "decks": 1000}], "shoes") is None
