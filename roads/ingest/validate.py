"""Validation of staged rows, vectorised: what can be stored, what breaks a rule, what cannot.

A row that cannot be stored (no table or shoe, an unreadable card, a hand of one card, no
outcome and nothing to derive it from, a duplicate coup number with other content) is
*quarantined* with its reason and field. A row that can be stored but breaks a rule (an
illegal draw or stand, totals or outcome not matching the cards, pair or natural flags that
contradict the cards, a card seen more often than the decks hold, a gap in the numbering, an
unreadable timestamp) is stored as recorded and *flagged*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from roads.cards import CARD_INDEX
from roads.engine import NO_CARD
from roads.ingest.labels import (
    CARD_SPELLINGS,
    FALSE_LABELS,
    OUTCOME_LABELS,
    TRUE_LABELS,
    VALUE_TOKENS,
)
from roads.schema import Card, conform
from roads.simulate import _pack_slots
from roads.tableau import BANKER_DRAWS, PLAYER_STOOD

_BANKER_DRAWS = {b * 11 + p: bool(BANKER_DRAWS[b, p]) for b in range(10) for p in range(11)}
_BOOLS = {**{t: True for t in TRUE_LABELS}, **{f: False for f in FALSE_LABELS}}
KEY = ["table_id", "shoe_id", "coup"]

FLAG_SCHEMA = {"file": pl.String, "row": pl.Int64, "table_id": pl.String, "shoe_id": pl.String,
               "coup": pl.Int32, "rule": pl.String, "message": pl.String}
QUARANTINE_SCHEMA = {"file": pl.String, "row": pl.Int64, "field": pl.String,
                     "reason": pl.String, "raw": pl.String}


@dataclass(frozen=True)
class Validated:
    coups: pl.DataFrame  # canonical, ready to store
    flags: pl.DataFrame  # FLAG_SCHEMA
    quarantine: pl.DataFrame  # QUARANTINE_SCHEMA
    duplicates: int  # identical repeated rows dropped


#: every accepted spelling of a card -> its index (rank * 4 + suit), one lookup per token
_CARD_INDEX = {spelling: CARD_INDEX[code] for spelling, code in CARD_SPELLINGS.items()}


def _slots(s: pl.DataFrame, side: str) -> pl.DataFrame:
    """Split a recorded hand into three card slots, flat (no per-row lists: fast).

    Adds ``_{side}_n`` (tokens), ``_{side}_kind`` (none/cards/values/bad), per slot the card
    index ``_{side}_c{i}`` (rank*4+suit) and point value ``_{side}_v{i}``.
    """
    text = (pl.col(f"{side}_cards").str.replace_all(r"[,;|/\s]+", " ").str.strip_chars())
    s = s.with_columns(
        pl.when(text == "").then(None).otherwise(text).str.split_exact(" ", 3)
        .alias(f"_{side}_parts"))
    tokens = [pl.col(f"_{side}_parts").struct.field(f"field_{i}") for i in range(4)]
    exprs: list[pl.Expr] = [
        pl.sum_horizontal([t.is_not_null().cast(pl.Int8) for t in tokens]).alias(f"_{side}_n")]
    for i in range(3):
        exprs += [
            tokens[i].replace_strict(_CARD_INDEX, default=None, return_dtype=pl.Int16)
            .alias(f"_{side}_c{i}"),
            tokens[i].replace_strict(VALUE_TOKENS, default=None, return_dtype=pl.Int16)
            .alias(f"_{side}_d{i}"),
            tokens[i].is_not_null().alias(f"_{side}_p{i}"),
        ]
    s = s.with_columns(exprs)
    present = [pl.col(f"_{side}_p{i}") for i in range(3)]
    all_cards = pl.all_horizontal([~p | pl.col(f"_{side}_c{i}").is_not_null()
                                   for i, p in enumerate(present)])
    all_values = pl.all_horizontal([~p | pl.col(f"_{side}_d{i}").is_not_null()
                                    for i, p in enumerate(present)])
    kind = (pl.when(pl.col(f"_{side}_n") == 0).then(pl.lit("none"))
            .when(all_cards).then(pl.lit("cards"))
            .when(all_values).then(pl.lit("values")).otherwise(pl.lit("bad")))
    s = s.with_columns(kind.alias(f"_{side}_kind"))
    points = []
    for i in range(3):
        card = pl.col(f"_{side}_c{i}")
        card_points = pl.when(card // 4 < 9).then(card // 4 + 1).otherwise(0)
        points.append(pl.when(pl.col(f"_{side}_kind") == "cards").then(card_points)
                      .when(pl.col(f"_{side}_kind") == "values").then(pl.col(f"_{side}_d{i}"))
                      .alias(f"_{side}_v{i}"))
    return s.with_columns(*points)


def _bool(column: str) -> pl.Expr:
    text = pl.col(column).str.strip_chars().str.to_lowercase()
    return text.replace_strict(_BOOLS, default=None, return_dtype=pl.Boolean).alias(f"_{column}")


def _int(column: str) -> pl.Expr:
    return pl.col(column).str.strip_chars().cast(pl.Int64, strict=False).alias(f"_{column}")


def validate(staged: pl.DataFrame, decks: int) -> Validated:
    """Split staged rows into stored coups (with flags) and quarantined rows."""
    s = _slots(_slots(staged, "player"), "banker").with_columns(
        pl.col("outcome").str.strip_chars().str.to_lowercase()
        .replace_strict(OUTCOME_LABELS, default=None).alias("_outcome"),
        _int("player_total"), _int("banker_total"), _int("coup"),
        _bool("natural"), _bool("player_pair"), _bool("banker_pair"),
        pl.col("dealt_at").str.strip_chars().str.replace(r"Z$", "+00:00")
        .str.to_datetime(time_zone="UTC", strict=False, time_unit="us").alias("_dealt_at"),
    )
    s = _tableau(s)
    # -- rows that cannot be stored ----------------------------------------------------------
    reasons = [
        (pl.col("table_id").is_null() | (pl.col("table_id").str.strip_chars() == ""),
         "table_id", "no table (give a table column or --table)"),
        (pl.col("shoe_id").is_null() | (pl.col("shoe_id").str.strip_chars() == ""),
         "shoe_id", "no shoe (give a shoe column or --shoe)"),
        ((pl.col("_player_kind") == "bad"), "player_cards", "unreadable card in the Player hand"),
        ((pl.col("_banker_kind") == "bad"), "banker_cards", "unreadable card in the Banker hand"),
        ((pl.col("_player_kind") != "none") & ~pl.col("_player_n").is_between(2, 3),
         "player_cards", "the Player hand must have two or three cards"),
        ((pl.col("_banker_kind") != "none") & ~pl.col("_banker_n").is_between(2, 3),
         "banker_cards", "the Banker hand must have two or three cards"),
        ((pl.col("_player_kind") == "none") != (pl.col("_banker_kind") == "none"),
         "player_cards", "cards recorded for one side only"),
        (pl.col("coup").is_not_null() & (pl.col("coup").str.strip_chars() != "")
         & pl.col("_coup").is_null(), "coup", "coup number is not a whole number"),
        (pl.col("outcome").is_not_null() & pl.col("_outcome").is_null(),
         "outcome", "unknown outcome label"),
        (pl.col("_final_outcome").is_null(), "outcome",
         "no outcome, and no cards or totals to derive it from"),
    ]
    reason = pl.lit(None, dtype=pl.String)
    where = pl.lit(None, dtype=pl.String)
    for condition, column, text in reversed(reasons):
        reason = pl.when(condition).then(pl.lit(text)).otherwise(reason)
        where = pl.when(condition).then(pl.lit(column)).otherwise(where)
    s = s.with_columns(reason.alias("_reason"), where.alias("_field"))
    # Shoe-line readers put their own reason in ``outcome`` for lines they could not split.
    s = s.with_columns(
        pl.when(pl.col("outcome").str.starts_with("invalid "))
        .then(pl.col("outcome")).otherwise(pl.col("_reason")).alias("_reason"))
    bad = s.filter(pl.col("_reason").is_not_null())
    good = s.filter(pl.col("_reason").is_null())
    # Coup numbers missing altogether: number rows in file order within their shoe.
    good = good.with_columns(
        pl.coalesce("_coup", pl.int_range(1, pl.len() + 1).over("_file", "table_id", "shoe_id"))
        .alias("_coup"))
    good, dup_bad, duplicates = _duplicates(good)
    coups = good.select(
        pl.col("table_id").str.strip_chars(), pl.col("shoe_id").str.strip_chars(),
        pl.col("_coup").alias("coup"), pl.col("_final_outcome").alias("outcome"),
        _card_list(good, "player").alias("player_cards"),
        _card_list(good, "banker").alias("banker_cards"),
        pl.coalesce("_player_total", "_cards_player_total").alias("player_total"),
        pl.coalesce("_banker_total", "_cards_banker_total").alias("banker_total"),
        pl.coalesce("_natural", "_cards_natural").alias("natural"),
        pl.coalesce("_player_pair", "_cards_player_pair").alias("player_pair"),
        pl.coalesce("_banker_pair", "_cards_banker_pair").alias("banker_pair"),
        pl.col("_dealt_at").alias("dealt_at"), pl.lit("import").alias("source"),
    )
    canonical = conform(coups, "coups")
    flags = pl.concat([_row_flags(good), _shoe_flags(good, decks)])
    quarantine = pl.concat([
        bad.select(pl.col("_file").alias("file"), pl.col("_row").alias("row"),
                   pl.col("_field").alias("field"), pl.col("_reason").alias("reason"),
                   _raw().alias("raw")),
        dup_bad,
    ])
    return Validated(canonical, flags, quarantine, duplicates)


def _card_list(frame: pl.DataFrame, side: str) -> pl.Series:
    """Canonical List(card) from the three slot columns, packed without per-row objects."""
    cards_level = (frame["_level"] == "cards").to_numpy()
    slots = frame.select([pl.col(f"_{side}_c{i}").fill_null(NO_CARD).cast(pl.UInt8)
                          for i in range(3)]).to_numpy()
    offsets, values = _pack_slots(np.ascontiguousarray(slots), 0, 3)
    lists = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(values, pa.uint8()),
                                          mask=pa.array(~cards_level))
    return pl.Series(f"{side}_cards", lists).list.eval(pl.element().cat.to(Card))


def _raw() -> pl.Expr:
    fields = ["table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards",
              "player_total", "banker_total", "dealt_at"]
    return pl.coalesce("_raw", pl.struct(fields).struct.json_encode())


def _tableau(s: pl.DataFrame) -> pl.DataFrame:
    """Replay the tableau on every row with cards or values; derive what the cards say."""
    level = (pl.when((pl.col("_player_kind") == "cards") & (pl.col("_banker_kind") == "cards"))
             .then(pl.lit("cards"))
             .when(pl.col("_player_kind").is_in(["cards", "values"])
                   & pl.col("_banker_kind").is_in(["cards", "values"]))
             .then(pl.lit("values")).otherwise(pl.lit("none")))
    s = s.with_columns(level.alias("_level"))
    has = pl.col("_level") != "none"
    p1, p2, p3 = (pl.col(f"_player_v{i}") for i in range(3))
    b1, b2, b3 = (pl.col(f"_banker_v{i}") for i in range(3))
    s = s.with_columns(
        ((p1 + p2) % 10).alias("_p2"), ((b1 + b2) % 10).alias("_b2"), p3.alias("_p3"),
        (pl.sum_horizontal(p1, p2, p3) % 10).cast(pl.Int8).alias("_cards_player_total"),
        (pl.sum_horizontal(b1, b2, b3) % 10).cast(pl.Int8).alias("_cards_banker_total"),
    )
    natural = (pl.col("_p2") >= 8) | (pl.col("_b2") >= 8)
    player_should = ~natural & (pl.col("_p2") <= 5)
    third = pl.when(pl.col("_player_n") == 3).then(pl.col("_p3")).otherwise(PLAYER_STOOD)
    banker_should = ~natural & (pl.col("_b2") * 11 + third).replace_strict(
        _BANKER_DRAWS, default=False, return_dtype=pl.Boolean)
    pt, bt = pl.col("_cards_player_total"), pl.col("_cards_banker_total")
    from_cards = pl.when(bt > pt).then(pl.lit("B")).when(pt > bt).then(pl.lit("P")) \
        .otherwise(pl.lit("T"))
    rpt, rbt = pl.col("_player_total"), pl.col("_banker_total")
    from_totals = pl.when(rbt > rpt).then(pl.lit("B")).when(rpt > rbt).then(pl.lit("P")) \
        .when(rpt.is_not_null() & rbt.is_not_null()).then(pl.lit("T"))
    cards_level = pl.col("_level") == "cards"
    return s.with_columns(
        pl.when(has).then(natural).alias("_cards_natural"),
        pl.when(has).then(player_should).alias("_player_should_draw"),
        pl.when(has).then(banker_should).alias("_banker_should_draw"),
        pl.when(has).then(from_cards).alias("_cards_outcome"),
        pl.when(cards_level).then(pl.col("_player_c0") // 4 == pl.col("_player_c1") // 4)
        .alias("_cards_player_pair"),
        pl.when(cards_level).then(pl.col("_banker_c0") // 4 == pl.col("_banker_c1") // 4)
        .alias("_cards_banker_pair"),
        pl.coalesce("_outcome", pl.when(has).then(from_cards), from_totals)
        .alias("_final_outcome"),
        pl.when(has).then(pt).alias("_cards_player_total"),
        pl.when(has).then(bt).alias("_cards_banker_total"),
    )


def _duplicates(good: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """Drop identical repeats of a coup; quarantine repeats that differ."""
    content = ["_final_outcome", *(f"_{side}_c{i}" for side in ("player", "banker")
                                   for i in range(3)), "_player_total", "_banker_total"]
    keyed = good.with_columns(pl.col("table_id").str.strip_chars(),
                              pl.col("shoe_id").str.strip_chars())
    key = ["table_id", "shoe_id", "_coup"]
    if not keyed.select(pl.struct(key).is_duplicated().any()).item():
        return keyed, pl.DataFrame(schema=QUARANTINE_SCHEMA), 0
    first = pl.int_range(pl.len()).over(key) == 0
    keyed = keyed.with_columns(first.alias("_first"),
                               pl.struct(content).hash().alias("_content"))
    keyed = keyed.with_columns(
        (pl.col("_content") == pl.col("_content").first().over(key)).alias("_same"))
    repeats = keyed.filter(~pl.col("_first"))
    differ = repeats.filter(~pl.col("_same"))
    quarantined = differ.select(
        pl.col("_file").alias("file"), pl.col("_row").alias("row"), pl.lit("coup").alias("field"),
        pl.lit("duplicate coup number with different content").alias("reason"),
        _raw().alias("raw"))
    return keyed.filter(pl.col("_first")), quarantined, repeats.height - differ.height


def _row_flags(good: pl.DataFrame) -> pl.DataFrame:
    has = pl.col("_level") != "none"
    rules = [
        (has & ((pl.col("_player_n") == 3) != pl.col("_player_should_draw")),
         "tableau", pl.format("the Player {} on {} against the tableau",
                              pl.when(pl.col("_player_n") == 3).then(pl.lit("drew"))
                              .otherwise(pl.lit("stood")), pl.col("_p2"))),
        (has & ((pl.col("_banker_n") == 3) != pl.col("_banker_should_draw")),
         "tableau", pl.format("the Banker {} on {} against the tableau",
                              pl.when(pl.col("_banker_n") == 3).then(pl.lit("drew"))
                              .otherwise(pl.lit("stood")), pl.col("_b2"))),
        (has & pl.col("_outcome").is_not_null()
         & (pl.col("_outcome") != pl.col("_cards_outcome")),
         "outcome", pl.format("outcome {} does not match the cards ({})", pl.col("_outcome"),
                              pl.col("_cards_outcome"))),
        (has & pl.col("_player_total").is_not_null()
         & (pl.col("_player_total") != pl.col("_cards_player_total")),
         "total", pl.format("Player total {} does not match the cards ({})",
                            pl.col("_player_total"), pl.col("_cards_player_total"))),
        (has & pl.col("_banker_total").is_not_null()
         & (pl.col("_banker_total") != pl.col("_cards_banker_total")),
         "total", pl.format("Banker total {} does not match the cards ({})",
                            pl.col("_banker_total"), pl.col("_cards_banker_total"))),
        (has & pl.col("_natural").is_not_null()
         & (pl.col("_natural") != pl.col("_cards_natural")),
         "natural", pl.lit("natural flag contradicts the cards")),
        (pl.col("_player_pair").is_not_null() & pl.col("_cards_player_pair").is_not_null()
         & (pl.col("_player_pair") != pl.col("_cards_player_pair")),
         "pair", pl.lit("Player pair flag contradicts the cards")),
        (pl.col("_banker_pair").is_not_null() & pl.col("_cards_banker_pair").is_not_null()
         & (pl.col("_banker_pair") != pl.col("_cards_banker_pair")),
         "pair", pl.lit("Banker pair flag contradicts the cards")),
        (pl.col("_level") == "values", "value-level",
         pl.lit("point values only: no pair information")),
        (pl.col("dealt_at").is_not_null() & (pl.col("dealt_at").str.strip_chars() != "")
         & pl.col("_dealt_at").is_null(),
         "timestamp", pl.format("unreadable timestamp {}", pl.col("dealt_at"))),
    ]
    frames = [
        good.filter(condition.fill_null(False)).select(
            pl.col("_file").alias("file"), pl.col("_row").alias("row"), "table_id", "shoe_id",
            pl.col("_coup").cast(pl.Int32).alias("coup"), pl.lit(rule).alias("rule"),
            message.alias("message"))
        for condition, rule, message in rules
    ]
    return pl.concat([f.cast(FLAG_SCHEMA) for f in frames])  # type: ignore[arg-type]


def _shoe_flags(good: pl.DataFrame, decks: int) -> pl.DataFrame:
    """Per-shoe rules: card inventory, numbering gaps and order, time order."""
    per_shoe = good.group_by("_file", "table_id", "shoe_id").agg(
        pl.col("_row").min().alias("row"), pl.len().alias("n"),
        pl.col("_coup").min().alias("lo"), pl.col("_coup").max().alias("hi"),
        (pl.col("_coup").diff() <= 0).any().alias("unordered"),
        (pl.col("_dealt_at").diff().dt.total_microseconds() < 0).any().alias("time_backwards"),
    )

    def shoe_flag(frame: pl.DataFrame, rule: str, message: pl.Expr) -> pl.DataFrame:
        return frame.select(pl.col("_file").alias("file"), "row", "table_id", "shoe_id",
                            pl.lit(None, dtype=pl.Int32).alias("coup"), pl.lit(rule).alias("rule"),
                            message.alias("message"))

    frames = [
        shoe_flag(per_shoe.filter(pl.col("hi") - pl.col("lo") + 1 != pl.col("n")), "numbering",
                  pl.format("coup numbers have gaps ({} coups numbered {}-{})", "n", "lo", "hi")),
        shoe_flag(per_shoe.filter(pl.col("unordered").fill_null(False)), "numbering",
                  pl.lit("coups are not in order in the file")),
        shoe_flag(per_shoe.filter(pl.col("time_backwards").fill_null(False)), "timestamp",
                  pl.lit("timestamps go backwards in the file")),
        _inventory(good, decks),
    ]
    return pl.concat([f.cast(FLAG_SCHEMA) for f in frames])  # type: ignore[arg-type]


def _inventory(good: pl.DataFrame, decks: int) -> pl.DataFrame:
    """Cards seen more often in a shoe than its decks hold (counted with numpy)."""
    cards = good.filter(pl.col("_level") == "cards")
    if cards.is_empty():
        return pl.DataFrame(schema=FLAG_SCHEMA)
    shoe = cards.select(pl.struct("table_id", "shoe_id").rank("dense").cast(pl.Int64) - 1) \
        .to_series().to_numpy()
    slots = cards.select([pl.col(f"_{side}_c{i}") for side in ("player", "banker")
                          for i in range(3)]).to_numpy()
    present = ~np.isnan(slots.astype(float))
    index = shoe[:, None] * 52 + np.where(present, slots, 0).astype(np.int64)
    counts = np.bincount(index[present], minlength=(int(shoe.max()) + 1) * 52)
    over = np.flatnonzero(counts > decks)
    if not len(over):
        return pl.DataFrame(schema=FLAG_SCHEMA)
    keys = cards.select("table_id", "shoe_id").with_columns(pl.Series("_s", shoe)).unique("_s")
    found = pl.DataFrame({"_s": over // 52, "card": over % 52, "n": counts[over]})
    found = found.join(keys, on="_s").with_columns(
        pl.col("card").cast(pl.UInt8).cat.to(Card).cast(pl.String).alias("card"))
    return found.select(
        pl.lit(None, dtype=pl.String).alias("file"), pl.lit(None, dtype=pl.Int64).alias("row"),
        "table_id", "shoe_id", pl.lit(None, dtype=pl.Int32).alias("coup"),
        pl.lit("inventory").alias("rule"),
        pl.format("card {} seen {} times; {} deck(s) hold {}", "card", "n", pl.lit(decks),
                  pl.lit(decks)).alias("message"))
