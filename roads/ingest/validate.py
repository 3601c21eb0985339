"""Validation of staged rows: what can be stored, what breaks a rule, what cannot.

A row that cannot be stored (no table or shoe, an unreadable card, a hand of one card, no
outcome and nothing to derive it from, an unknown outcome label, a duplicate coup number
with other content) is *quarantined* with its reason and field. A row that can be stored but
breaks a rule (an illegal draw or stand, totals or outcome not matching the cards, pair or
natural flags that contradict the cards, a card seen more often than the decks hold, a gap
in the numbering, an unreadable timestamp) is stored *as recorded* and *flagged*.

Two steps: a front end *parses* every field (:func:`parse_staged` for any reader's staging
frame of text; :mod:`roads.ingest.fastcsv` straight from a plain CSV file's bytes) into
:class:`Parsed`, and :func:`check` replays and checks the parsed rows, whichever front end
read them. Strings are parsed and rows replayed by compiled passes
(:mod:`roads.replay`); polars does the rest (labels, grouping, assembling the
canonical columns).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pyarrow as pa

from roads import replay as k
from roads.arrow_arrays import large_lists, numeric
from roads.ingest import bounds
from roads.ingest.engine_batches import _pack_slots
from roads.ingest.labels import FALSE_LABELS, OUTCOME_LABELS, TRUE_LABELS
from roads.ingest.ragged import RAGGED, RAGGED_FIELD
from roads.schema import (
    ID_MAX,
    Card,
    Entry,
    Outcome,
    Source,
    conform,
    max_coups,
    rising_within_shoes,
    shoe_runs,
)

OUTCOME_CODES = {label: "BPT".index(code) for label, code in OUTCOME_LABELS.items()}
BOOL_CODES = {**{t: 1 for t in TRUE_LABELS}, **{f: 0 for f in FALSE_LABELS}}

FLAG_SCHEMA = {"file": pl.String, "row": pl.Int64, "table_id": pl.String, "shoe_id": pl.String,
               "coup": pl.Int32, "rule": pl.String, "message": pl.String}
#: A shoe's totals for the ``shoes`` table (coups, first and last time, cards dealt: null
#: unless every coup has its cards).
SHOE_TOTALS: dict[str, pl.DataType] = {
    "coups": pl.Int16(), "started_at": pl.Datetime("us", "UTC"),
    "ended_at": pl.Datetime("us", "UTC"), "cards_dealt": pl.Int16()}
QUARANTINE_SCHEMA = {"file": pl.String, "row": pl.Int64, "field": pl.String,
                     "reason": pl.String, "raw": pl.String}
_KERNEL_REASONS = {
    k.Q_PLAYER_BAD: ("player_cards", "unreadable card in the Player hand"),
    k.Q_BANKER_BAD: ("banker_cards", "unreadable card in the Banker hand"),
    k.Q_PLAYER_COUNT: ("player_cards", "the Player hand must have two or three cards"),
    k.Q_BANKER_COUNT: ("banker_cards", "the Banker hand must have two or three cards"),
    k.Q_ONE_SIDE: ("player_cards", "cards recorded for one side only"),
    k.Q_NO_OUTCOME: ("outcome", "no outcome, and no cards or totals to derive it from"),
}


@dataclass(frozen=True)
class Validated:
    coups: pl.DataFrame  # canonical, ready to store
    flags: pl.DataFrame  # FLAG_SCHEMA
    quarantine: pl.DataFrame  # QUARANTINE_SCHEMA
    duplicates: int  # identical repeated rows dropped
    shoes: pl.DataFrame  # per shoe of ``coups``: table_id, shoe_id and SHOE_TOTALS
    starts: np.ndarray | None = None  # the coups' shoe runs, when each shoe is one run


def _spellings(mapping: dict[str, int]) -> dict[str, int]:
    """The labels as files usually write them (``banker``, ``Banker``, ``BANKER``)."""
    out: dict[str, int] = {}
    for label, code in mapping.items():
        for form in (label, label.upper(), label.title(), label.capitalize()):
            out.setdefault(form, code)
    return out


def _code(frame: pl.DataFrame, column: str, mapping: dict[str, int], missing: int = -1,
          unknown: int = -2) -> pl.Series:
    """A label column as int codes: ``missing`` when empty, ``unknown`` when unrecognised.

    Exact spellings are looked up first (one hash lookup a row); only when some value is
    not found is the column stripped and lower-cased, which costs three more passes.
    """
    raw = frame[column]
    if raw.null_count() == len(raw):
        return pl.Series(column, np.full(len(raw), missing, dtype=np.int8))
    fast = raw.replace_strict(_spellings(mapping), default=None, return_dtype=pl.Int8)
    if fast.null_count() == raw.null_count():
        return fast.fill_null(missing)
    text = raw.str.strip_chars().str.to_lowercase()
    codes = text.replace_strict(mapping, default=unknown, return_dtype=pl.Int8)
    return codes.set(text.is_null() | (text == ""), missing)


def _whole_numbers(column: pl.Series) -> tuple[pl.Series, np.ndarray]:
    """A text column as whole numbers (null where blank or unreadable), and where it was
    unreadable. Read as it is first; only when some value did not read is the column
    stripped of blanks and read again (a clean file is never copied)."""
    parsed = column.cast(pl.Int64, strict=False)
    if parsed.null_count() == column.null_count():
        return parsed, np.zeros(len(column), dtype=np.bool_)
    text = column.str.strip_chars()
    parsed = text.cast(pl.Int64, strict=False)
    return parsed, (parsed.is_null() & text.is_not_null() & (text != "")).to_numpy()


#: Timestamp layouts tried in order on a sample; the first that reads it all is used for the
#: column (inferring per value is ten times slower). Naive times are taken as UTC.
TIME_FORMATS = (
    "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S%.fZ", "%Y-%m-%dT%H:%M:%S%:z",
    "%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%:z",
    "%Y-%m-%d %H:%M:%S%.f%:z", "%Y/%m/%d %H:%M:%S", "%d/%m/%Y %H:%M:%S", "%d.%m.%Y %H:%M:%S",
)


def _as_utc(parsed: pl.Series) -> pl.Series:
    dtype = parsed.dtype
    if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
        return parsed.dt.convert_time_zone("UTC")
    return parsed.dt.replace_time_zone("UTC")


def _in_one_layout(clean: pl.Series) -> pl.Series | None:
    """``clean`` read with the first layout that reads a sample of it whole, else None."""
    sample = clean.drop_nulls().head(1000)
    for fmt in TIME_FORMATS:
        if sample.str.to_datetime(fmt, strict=False, time_unit="us").null_count() == 0:
            return _as_utc(clean.str.to_datetime(fmt, strict=False, time_unit="us"))
    return None


def parse_times(text: pl.Series) -> pl.Series:
    """Timestamps to Datetime(us, UTC); unreadable values become null (and are flagged)."""
    if text.null_count() < len(text):  # a clean column reads as it is, without a copy
        fast = _in_one_layout(text)
        if fast is not None and fast.null_count() == text.null_count():
            return fast.cast(pl.Datetime("us", "UTC"))
    clean = text.str.strip_chars()
    clean = clean.set(clean == "", None)
    if clean.null_count() == len(clean):
        return pl.Series(text.name, [None] * len(text), dtype=pl.Datetime("us", "UTC"))
    full = _in_one_layout(clean)
    if full is None:
        full = pl.Series(text.name, [None] * len(text), dtype=pl.Datetime("us", "UTC"))
    missed = full.is_null() & clean.is_not_null()
    if missed.any():  # a few rows in another layout: infer for those rows only
        others = clean.filter(missed).str.to_datetime(strict=False, time_unit="us",
                                                      time_zone="UTC")
        full = full.scatter(missed.arg_true(), others)
    return full.cast(pl.Datetime("us", "UTC"))


def _card_list(slots: np.ndarray, keep: np.ndarray, name: str) -> pl.Series:
    """Canonical List(card) from (rows, 3) slots (NONE where empty); null where not ``keep``."""
    offsets, values = _pack_slots(np.ascontiguousarray(slots), 0, 3)
    lists = large_lists(offsets, numeric(values, pa.uint8()), keep)
    return pl.Series(name, lists).list.eval(pl.element().cat.to(Card))


@dataclass(frozen=True)
class Hands:
    """One side's hands as slots (see :func:`roads.replay.hand`)."""

    cards: np.ndarray  # (rows, 3) uint8, NONE where empty
    values: np.ndarray  # (rows, 3) int8, -1 where empty
    count: np.ndarray  # int16 tokens
    kind: np.ndarray  # int8 KIND_*


@dataclass(frozen=True)
class Parsed:
    """Every row's fields parsed, whichever front end read them (the polars reader and
    :func:`parse_staged`, or :mod:`roads.ingest.fastcsv` straight from the bytes).

    ``rows`` holds ``_file``, ``_row``, ``_raw`` and the stripped ``table_id``/``shoe_id``,
    plus the raw text fields where the front end kept them (for quarantine and messages).
    ``recorded`` values are -1 when absent; the outcome is -2 when its label is unknown.
    ``starts``: the shoe runs of all rows, when the front end found every shoe to be one run.
    """

    rows: pl.DataFrame
    player: Hands
    banker: Hands
    recorded: dict[str, np.ndarray]  # outcome, player_total, banker_total, natural, pairs
    coup: pl.Series  # whole numbers, null where missing or unreadable
    coup_unreadable: np.ndarray
    dealt_at: pl.Series  # Datetime(us, UTC), null where missing or unreadable
    starts: np.ndarray | None = None


def validate(staged: pl.DataFrame, decks: int) -> Validated:
    """Split staged rows into stored coups (with flags) and quarantined rows."""
    return check(parse_staged(staged), decks)


def parse_staged(staged: pl.DataFrame) -> Parsed:
    """Parse a staging frame's text fields (the general front end, any reader)."""
    sides = [Hands(*k.hands(staged[c].to_arrow())) for c in ("player_cards", "banker_cards")]
    totals = {c: _whole_numbers(staged[c])[0] for c in ("player_total", "banker_total")}
    parsed = pl.DataFrame(
        [v.fill_null(-1).clip(-1, 99).cast(pl.Int16) for v in totals.values()]).with_columns(
        _code(staged, "outcome", OUTCOME_CODES).alias("outcome"),
        *(_code(staged, c, BOOL_CODES, unknown=-1).alias(c)
          for c in ("natural", "player_pair", "banker_pair")))
    recorded = {c: parsed[c].to_numpy().astype(np.int16) for c in parsed.columns}
    coup, coup_unreadable = _whole_numbers(staged["coup"])
    rows = staged.with_columns(*(staged[c].str.strip_chars() for c in ("table_id", "shoe_id")))
    return Parsed(rows, sides[0], sides[1], recorded, coup, coup_unreadable,
                  parse_times(staged["dealt_at"]))


def check(parsed: Parsed, decks: int) -> Validated:
    """Replay and check parsed rows: canonical coups, flags, quarantine."""
    p, b, recorded = parsed.player, parsed.banker, parsed.recorded
    n = len(p.count)
    outcome_code = recorded["outcome"]
    out = {name: np.empty(n, dtype=np.int16) for name in (
        "final_outcome", "cards_p_total", "cards_b_total", "cards_natural", "cards_p_pair",
        "cards_b_pair")}
    flags = np.empty(n, dtype=np.int32)
    reason = np.empty(n, dtype=np.int8)
    level = np.empty(n, dtype=np.int8)
    k.check_rows(p.values, p.cards, p.count, p.kind, b.values, b.cards, b.count, b.kind,
                 np.where(outcome_code == -2, -1, outcome_code).astype(np.int16),
                 recorded["player_total"], recorded["banker_total"], recorded["natural"],
                 recorded["player_pair"], recorded["banker_pair"], out["final_outcome"],
                 out["cards_p_total"], out["cards_b_total"], out["cards_natural"],
                 out["cards_p_pair"], out["cards_b_pair"], flags, reason, level)
    coup_unreadable = parsed.coup_unreadable
    s = parsed.rows.with_columns(
        parsed.coup.alias("_coup"), parsed.dealt_at.alias("_dealt_at"),
        pl.Series("_outcome_code", outcome_code), pl.Series("_kernel_reason", reason),
        pl.Series("_flags", flags), pl.Series("_level", level),
        pl.Series("_index", np.arange(n)), pl.Series("_coup_unreadable", coup_unreadable),
    )
    # -- rows that cannot be stored ----------------------------------------------------------
    top = max_coups(decks)
    coup_out = ((parsed.coup < 1) | (parsed.coup > top)).fill_null(False).to_numpy()
    time_out = _time_out(parsed.dealt_at)
    s = s.with_columns(pl.Series("_coup_out", coup_out), pl.Series("_time_out", time_out))
    maybe_bad = (reason != 0) | (outcome_code == -2) | coup_unreadable | coup_out | time_out
    if RAGGED in s.columns:  # (a CSV line of another number of fields than its header)
        maybe_bad |= s[RAGGED].is_not_null().to_numpy()
    bad_ids = {}
    for c in ("table_id", "shoe_id"):
        maybe_bad |= (s[c].is_null() | (s[c] == "")).to_numpy()
        values = s[c].drop_nulls().unique()
        wrong = values.filter(~values.str.contains(bounds.ID_PATTERN_TEXT)
                              | (values.str.len_chars() > ID_MAX))
        if wrong.len():
            bad_ids[c] = wrong
            maybe_bad |= s[c].is_in(wrong.implode()).fill_null(False).to_numpy()
    if maybe_bad.any():
        bad, good = _rejected(s, bad_ids, top)
    else:  # the usual case: nothing to split off, no copies
        bad, good = None, s
    # Coup numbers missing altogether: number rows in file order within their shoe.
    if good["_coup"].null_count():
        good = good.with_columns(pl.coalesce(
            "_coup", pl.int_range(1, pl.len() + 1).over("_file", "table_id", "shoe_id")))
    index = good["_index"].to_numpy()
    if len(index) == n:
        index = slice(None)  # type: ignore[assignment]  # every row kept: no gathers
    good = good.with_columns(
        *(pl.Series(f"_{name}", arr[index]) for name, arr in out.items()),
        *(pl.Series(f"_rec_{name}", arr[index]) for name, arr in recorded.items()),
        *(pl.Series(f"_p{i}", p.cards[index, i]) for i in range(3)),
        *(pl.Series(f"_b{i}", b.cards[index, i]) for i in range(3)),
        *(pl.Series(f"_pv{i}", p.values[index, i]) for i in range(2)),
        *(pl.Series(f"_bv{i}", b.values[index, i]) for i in range(2)))
    shoes = _shoe_ids(good, parsed.starts if bad is None else None)
    good, dup_bad, duplicates = _duplicates(good, shoes)
    if duplicates or not dup_bad.is_empty():
        shoes = _shoe_ids(good)
    good, full = _over_capacity(good, shoes[0], decks, bad)
    if not full.is_empty():
        shoes = _shoe_ids(good)
    # The canonical columns are assembled beside the rule findings (both free the GIL).
    with ThreadPoolExecutor(max_workers=1) as pool:
        canonical = pool.submit(_canonical, good, p.cards, b.cards)
        kept = _kept(good, n)
        shoe_flags, shoe_totals = _shoe_flags(good, shoes[0], p.cards[kept], b.cards[kept],
                                              decks)
        flag_rows = pl.concat([_row_flags(good), shoe_flags])
        coups = canonical.result()
    quarantine = pl.concat([
        bad.select(pl.col("_file").alias("file"), pl.col("_row").alias("row"),
                   pl.col("_field").alias("field"), pl.col("_reason").alias("reason"),
                   _raw(bad).alias("raw")) if bad is not None
        else pl.DataFrame(schema=QUARANTINE_SCHEMA),
        dup_bad, full,
    ])
    ids, contiguous = shoes
    starts = np.diff(ids, prepend=-1) != 0 if contiguous else None
    return Validated(coups, flag_rows, quarantine, duplicates, shoe_totals, starts)


#: The first and the next-after-last instant of :data:`bounds.DEALT_AT_YEARS`, in
#: microseconds since the epoch (the store's timestamps).
_TICKS = tuple(int((datetime(y, 1, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC))
                   / timedelta(microseconds=1))
               for y in (bounds.DEALT_AT_YEARS[0], bounds.DEALT_AT_YEARS[1] + 1))


def _time_out(times: pl.Series) -> np.ndarray:
    """Where a timestamp falls outside :data:`bounds.DEALT_AT_YEARS` in UTC (such a row is
    quarantined: a year past 9999 could not even be read back from the store). The reason
    names the year, not the time, so that the report's counts by reason stay few."""
    first, last = bounds.DEALT_AT_YEARS
    ticks = times.to_physical()  # (as integers: a year past 9999 is no Python datetime)
    low, high = ticks.min(), ticks.max()  # (the usual file: two reductions, no mask)
    if low is None or (_TICKS[0] <= low and high < _TICKS[1]):  # type: ignore[operator]
        return np.zeros(times.len(), dtype=bool)
    year = times.dt.year()
    return ((year < first) | (year > last)).fill_null(False).to_numpy()


def _rejected(s: pl.DataFrame, bad_ids: dict[str, pl.Series], top: int
              ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows that cannot be stored, with their reason and field; the rest)."""
    reasons: list[tuple[pl.Expr, str, str | pl.Expr]] = [
        *([(pl.col(RAGGED).is_not_null(), RAGGED_FIELD, pl.col(RAGGED))]
          if RAGGED in s.columns else []),
        (pl.col("table_id").is_null() | (pl.col("table_id") == ""), "table_id",
         "no table (give a table column or --table)"),
        (pl.col("shoe_id").is_null() | (pl.col("shoe_id") == ""), "shoe_id",
         "no shoe (give a shoe column or --shoe)"),
        *((pl.col(c).is_in(wrong.implode()).fill_null(False), c,
           f"{c} may hold only {bounds.ID_CHARACTERS}") for c, wrong in bad_ids.items()),
        *((pl.col("_kernel_reason") == code, f, text)
          for code, (f, text) in _KERNEL_REASONS.items() if code != k.Q_NO_OUTCOME),
        (pl.col("_coup_unreadable"), "coup", "coup number is not a whole number"),
        (pl.col("_coup_out"), "coup",
         f"coup number is outside 1-{top} (the most coups the rule set's decks deal)"),
        (pl.col("_time_out"), "dealt_at",
         pl.format("dealt_at is in the year {} (UTC), outside the years {}-{}",
                   pl.col("_dealt_at").dt.year(), *map(pl.lit, bounds.DEALT_AT_YEARS))),
        *([(pl.col("outcome").str.starts_with("invalid "), "outcome", "invalid line")]
          if "outcome" in s.columns else []),
        (pl.col("_outcome_code") == -2, "outcome", "unknown outcome label"),
        (pl.col("_kernel_reason") == k.Q_NO_OUTCOME, "outcome",
         _KERNEL_REASONS[k.Q_NO_OUTCOME][1]),
    ]
    why = pl.lit(None, dtype=pl.String)
    where = pl.lit(None, dtype=pl.String)
    for condition, column, text in reversed(reasons):
        message = text if isinstance(text, pl.Expr) else \
            pl.col("outcome") if text == "invalid line" else pl.lit(text)
        why = pl.when(condition).then(message).otherwise(why)
        where = pl.when(condition).then(pl.lit(column)).otherwise(where)
    s = s.with_columns(why.alias("_reason"), where.alias("_field"))
    rejected = s["_reason"].is_not_null()
    return s.filter(rejected), s.filter(~rejected)


def _over_capacity(good: pl.DataFrame, ids: np.ndarray, decks: int,
                   bad: pl.DataFrame | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Shoes with more coups than their decks can deal are quarantined whole (a shoe of
    33,000 coups is several shoes under one id, or not a shoe at all). Its rows numbered
    past the most (in ``bad``, quarantined on their own) count too: else a line of 300
    outcomes stored its first 104 as a shoe."""
    counts = np.bincount(ids) if len(ids) else np.zeros(0, dtype=np.int64)
    beyond = None if bad is None else bad.filter("_coup_out")
    if beyond is None or not beyond.height:  # the usual file: a count per shoe, no gather
        over = np.flatnonzero(counts > max_coups(decks))
        if not len(over):
            return good, pl.DataFrame(schema=QUARANTINE_SCHEMA)
        mask = np.isin(ids, over)
        per_row = np.zeros(len(ids), dtype=np.int64)
        per_row[mask] = counts[ids[mask]]
    else:
        key = ["_file", "table_id", "shoe_id"]
        numbered = beyond.group_by(key).len("_beyond")
        per_row = counts[ids] + good.select(key).join(
            numbered, on=key, how="left", maintain_order="left", nulls_equal=True
        )["_beyond"].fill_null(0).to_numpy()
        mask = per_row > max_coups(decks)
        if not mask.any():
            return good, pl.DataFrame(schema=QUARANTINE_SCHEMA)
    rows = good.filter(pl.Series(mask)).with_columns(pl.Series("_n", per_row[mask]))
    full = rows.select(
        pl.col("_file").alias("file"), pl.col("_row").alias("row"),
        pl.lit("shoe_id").alias("field"),
        pl.format(f"the shoe would hold {{}} coups; {decks} decks deal at most "
                  f"{max_coups(decks)}", pl.col("_n")).alias("reason"), _raw(rows).alias("raw"))
    return good.filter(pl.Series(~mask)), full


def _kept(good: pl.DataFrame, n: int) -> np.ndarray | slice:
    """Where the kept rows were among the ``n`` staged ones (every row: no gather)."""
    index = good["_index"].to_numpy()
    return slice(None) if len(index) == n else index


def _canonical(good: pl.DataFrame, p_cards: np.ndarray, b_cards: np.ndarray) -> pl.DataFrame:
    """The canonical coups: recorded values where recorded, else what the cards say."""
    index = _kept(good, len(p_cards))
    keep = good["_level"].to_numpy() == 1

    def pick(recorded: str, derived: str, dtype: pl.DataType) -> pl.Expr:
        value = pl.when(pl.col(recorded) >= 0).then(pl.col(recorded)) \
            .when(pl.col(derived) >= 0).then(pl.col(derived))
        return value.cast(dtype)

    coups = good.select(
        "table_id", "shoe_id", pl.col("_coup").alias("coup"),
        pl.col("_final_outcome").cast(pl.UInt8).cat.to(Outcome).alias("outcome"),
        _card_list(p_cards[index], keep, "player_cards"),
        _card_list(b_cards[index], keep, "banker_cards"),
        pick("_rec_player_total", "_cards_p_total", pl.Int8()).alias("player_total"),
        pick("_rec_banker_total", "_cards_b_total", pl.Int8()).alias("banker_total"),
        pick("_rec_natural", "_cards_natural", pl.Boolean()).alias("natural"),
        pick("_rec_player_pair", "_cards_p_pair", pl.Boolean()).alias("player_pair"),
        pick("_rec_banker_pair", "_cards_b_pair", pl.Boolean()).alias("banker_pair"),
        pl.col("_dealt_at").alias("dealt_at"), pl.lit("import", dtype=Source).alias("source"),
        pl.lit("import", dtype=Entry).alias("entry"),
    )
    return conform(coups, "coups")


def _raw(rows: pl.DataFrame) -> pl.Expr:
    """The row as read: the reader's verbatim text, else its raw fields as JSON (a front end
    without raw fields leaves it to the caller, see :func:`roads.ingest.readers.raw_rows`)."""
    fields = [f for f in ("table_id", "shoe_id", "coup", "outcome", "player_cards",
                          "banker_cards", "player_total", "banker_total", "dealt_at")
              if f in rows.columns]
    return pl.coalesce("_raw", pl.struct(fields).struct.json_encode()) if "coup" in fields \
        else pl.col("_raw")


def _duplicates(good: pl.DataFrame, shoes: tuple[np.ndarray, bool]
                ) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """Drop identical repeats of a coup; quarantine repeats that differ.

    ``shoes``: :func:`_shoe_ids`. When each shoe is one run of rows with rising coup
    numbers (as exports list them), no coup can repeat and nothing needs hashing."""
    key = ["table_id", "shoe_id", "_coup"]
    ids, contiguous = shoes
    if contiguous and rising_within_shoes(good["_coup"].to_numpy(), np.diff(ids, prepend=-1) != 0):
        return good, pl.DataFrame(schema=QUARANTINE_SCHEMA), 0
    hashed = good.select(pl.struct("table_id", "shoe_id", "_coup").hash()).to_series().to_numpy()
    ordered = np.sort(hashed)
    if not (ordered[1:] == ordered[:-1]).any():  # no repeated (table, shoe, coup)
        return good, pl.DataFrame(schema=QUARANTINE_SCHEMA), 0
    content = ["_final_outcome", "_p0", "_p1", "_p2", "_b0", "_b1", "_b2",
               "_rec_player_total", "_rec_banker_total"]
    keyed = good.with_columns((pl.int_range(pl.len()).over(key) == 0).alias("_first"),
                              pl.struct(content).hash().alias("_content"))
    keyed = keyed.with_columns(
        (pl.col("_content") == pl.col("_content").first().over(key)).alias("_same"))
    repeats = keyed.filter(~pl.col("_first"))
    differ = repeats.filter(~pl.col("_same"))
    quarantined = differ.select(
        pl.col("_file").alias("file"), pl.col("_row").alias("row"), pl.lit("coup").alias("field"),
        pl.lit("duplicate coup number with different content").alias("reason"),
        _raw(differ).alias("raw"))
    return keyed.filter(pl.col("_first")), quarantined, repeats.height - differ.height


def _row_flags(good: pl.DataFrame) -> pl.DataFrame:
    """One flag row per broken rule per coup (from the kernel's bitmask)."""
    bit = pl.col("_flags")
    drew = {"p": pl.when(pl.col("_p2") != k.NONE).then(pl.lit("drew")).otherwise(pl.lit("stood")),
            "b": pl.when(pl.col("_b2") != k.NONE).then(pl.lit("drew")).otherwise(pl.lit("stood"))}
    outcome_name = {0: "B", 1: "P", 2: "T"}
    rules = [
        (k.F_PLAYER_TABLEAU, "tableau",
         pl.format("the Player {} on {} against the tableau", drew["p"],
                   pl.col("_two_p"))),
        (k.F_BANKER_TABLEAU, "tableau",
         pl.format("the Banker {} on {} against the tableau", drew["b"],
                   pl.col("_two_b"))),
        (k.F_OUTCOME, "outcome",
         pl.format("outcome {} does not match the cards ({})",
                   pl.col("_outcome_code").replace_strict(outcome_name, return_dtype=pl.String),
                   pl.col("_derived").replace_strict(outcome_name, default="?",
                                                     return_dtype=pl.String))),
        (k.F_PLAYER_TOTAL, "total", pl.format("Player total {} does not match the cards ({})",
                                              "_rec_player_total", "_cards_p_total")),
        (k.F_BANKER_TOTAL, "total", pl.format("Banker total {} does not match the cards ({})",
                                              "_rec_banker_total", "_cards_b_total")),
        (k.F_NATURAL, "natural", pl.lit("natural flag contradicts the cards")),
        (k.F_PLAYER_PAIR, "pair", pl.lit("Player pair flag contradicts the cards")),
        (k.F_BANKER_PAIR, "pair", pl.lit("Banker pair flag contradicts the cards")),
        (k.F_VALUE_LEVEL, "value-level", pl.lit("point values only: no pair information")),
    ]
    flagged = good.filter(bit != 0)
    frames = []
    if not flagged.is_empty():
        # Two-card totals and the outcome the cards give, only for the few flagged rows.
        flagged = flagged.with_columns(
            pl.when(pl.col("_cards_p_total") > pl.col("_cards_b_total")).then(1)
            .when(pl.col("_cards_b_total") > pl.col("_cards_p_total")).then(0)
            .otherwise(2).alias("_derived"),
            _two_card_total("_p").alias("_two_p"), _two_card_total("_b").alias("_two_b"))
        for position, rule, message in rules:
            hit = flagged.filter((bit & (1 << position)) != 0)
            frames.append(_flag_frame(hit, rule, message))
    # Unreadable timestamps (only a front end that keeps the text can have them).
    if "dealt_at" in good.columns and \
            good["_dealt_at"].null_count() > good["dealt_at"].null_count():
        unreadable = good.filter(pl.col("dealt_at").is_not_null()
                                 & (pl.col("dealt_at").str.strip_chars() != "")
                                 & pl.col("_dealt_at").is_null())
        frames.append(_flag_frame(unreadable, "timestamp",
                                  pl.format("unreadable timestamp {}", pl.col("dealt_at"))))
    return pl.concat(frames) if frames else pl.DataFrame(schema=FLAG_SCHEMA)


def _two_card_total(prefix: str) -> pl.Expr:
    """The side's two-card total (what its draw depends on), from the point values."""
    return ((pl.col(f"{prefix}v0") + pl.col(f"{prefix}v1")) % 10).cast(pl.String)


def _flag_frame(rows: pl.DataFrame, rule: str, message: pl.Expr) -> pl.DataFrame:
    return rows.select(
        pl.col("_file").alias("file"), pl.col("_row").alias("row"), "table_id", "shoe_id",
        pl.col("_coup").cast(pl.Int32).alias("coup"), pl.lit(rule).alias("rule"),
        message.alias("message")).cast(FLAG_SCHEMA)  # type: ignore[arg-type]


def _shoe_ids(good: pl.DataFrame, starts: np.ndarray | None = None
              ) -> tuple[np.ndarray, bool]:
    """Dense shoe ids per (file, table, shoe), and whether each shoe is one run of rows.

    Exports list a shoe's coups together, so runs of equal keys are tried first (each row
    compared with the one before, unless the front end found the runs: ``starts``); if a
    key comes back later, rank instead."""
    if starts is not None:
        return np.cumsum(starts) - 1, True
    if good.height and (good["_file"] == good["_file"][0]).all():
        starts = shoe_runs(good)
        if starts is not None:
            return np.cumsum(starts) - 1, True
    ranked = good.select(pl.struct("_file", pl.struct("table_id", "shoe_id").hash())
                         .rank("dense").cast(pl.Int64) - 1)
    return ranked.to_series().to_numpy(), False


def _shoe_flags(good: pl.DataFrame, ids: np.ndarray, p_cards: np.ndarray,
                b_cards: np.ndarray, decks: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-shoe rules in one compiled pass: numbering gaps and order, time order, inventory;
    and, from the same pass, each shoe's totals (SHOE_TOTALS).

    Shoes are told apart per input file (a shoe split over two files is checked per file).
    ``p_cards``/``b_cards``: the kept rows' card slots.
    """
    if good.is_empty():
        return pl.DataFrame(schema=FLAG_SCHEMA), pl.DataFrame(
            schema={"table_id": pl.String, "shoe_id": pl.String, **SHOE_TOTALS})
    n_shoes = int(ids.max()) + 1
    times = good["_dealt_at"]
    stats = np.empty((n_shoes, 10), dtype=np.int64)
    counts = np.zeros((n_shoes, 52), dtype=np.int32)
    k.shoe_checks(ids, good["_coup"].to_numpy().astype(np.int64),
                  times.dt.epoch("us").fill_null(0).to_numpy(),
                  times.is_not_null().to_numpy(), np.ascontiguousarray(p_cards),
                  np.ascontiguousarray(b_cards), (good["_level"] == 1).to_numpy(),
                  n_shoes, decks, stats, counts)
    first = stats[:, 0]
    shoes = good.select(pl.col("_file").alias("file"), pl.col("_row").alias("row"),
                        "table_id", "shoe_id")[first]
    per_shoe = shoes.with_columns(
        pl.Series("n", stats[:, 1]), pl.Series("lo", stats[:, 2]), pl.Series("hi", stats[:, 3]),
        pl.Series("unordered", stats[:, 4] == 1), pl.Series("backwards", stats[:, 5] == 1))

    def shoe_flag(frame: pl.DataFrame, rule: str, message: pl.Expr) -> pl.DataFrame:
        return frame.select("file", "row", "table_id", "shoe_id",
                            pl.lit(None, dtype=pl.Int32).alias("coup"), pl.lit(rule).alias("rule"),
                            message.alias("message")).cast(FLAG_SCHEMA)  # type: ignore[arg-type]

    shoe_of, card = np.nonzero(counts > decks)
    inventory = per_shoe[shoe_of].with_columns(
        pl.Series("card", card.astype(np.uint8)).cat.to(Card).cast(pl.String),
        pl.Series("seen", counts[shoe_of, card]))

    def stamps(values: np.ndarray) -> pl.Series:
        return pl.Series(values).cast(pl.Datetime("us", "UTC")).set(
            pl.Series(np.abs(values) == 2**62), None)

    totals = shoes.select("table_id", "shoe_id").with_columns(
        pl.Series("coups", stats[:, 1]).cast(pl.Int16), stamps(stats[:, 6]).alias("started_at"),
        stamps(stats[:, 7]).alias("ended_at"),
        pl.Series("cards_dealt", stats[:, 8]).cast(pl.Int16).set(
            pl.Series(stats[:, 9] == 0), None))
    flags = pl.concat([
        shoe_flag(per_shoe.filter(pl.col("hi") - pl.col("lo") + 1 != pl.col("n")), "numbering",
                  pl.format("coup numbers have gaps ({} coups numbered {}-{})", "n", "lo", "hi")),
        shoe_flag(per_shoe.filter("unordered"), "numbering",
                  pl.lit("coups are not in order in the file")),
        shoe_flag(per_shoe.filter("backwards"), "timestamp",
                  pl.lit("timestamps go backwards in the file")),
        shoe_flag(inventory, "inventory",
                  pl.format("card {} seen {} times; {} deck(s) hold {}", "card", "seen",
                            pl.lit(decks), pl.lit(decks))),
    ])
    return flags, totals
