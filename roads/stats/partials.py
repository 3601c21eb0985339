"""Outcome statistics for any slice of canonical coups, each beside its exact expectation.

Pure: a frame of coups (as :meth:`roads.store.Store.read_coups` returns them, corrections
applied) and the shoes' rule sets in; plain dictionaries out (the ``roads stats --json``
contract, see ``docs/stats.md``). Slices mixing rule sets are handled by summing expected
counts per rule set, never by averaging shares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np
import polars as pl

from roads.schema import grouped_by_shoe
from roads.stats.columns import ShoeColumns
from roads.stats.expect import expectation
from roads.stats.sequence import MAX_RUN, SequenceStats, _pass, expected_runs, sequence_stats

#: The 99.5 % standard normal quantile, ``float(scipy.special.ndtri(0.995))`` (a test checks
#: it): written out, so the statistics do not import scipy for one constant.
Z99 = 2.5758293035489004
LAGS = 5  # serial-correlation lags, as :func:`roads.stats.sequence.sequence_stats`


def wilson(count: int, n: int, z: float = Z99) -> tuple[float, float]:
    """Wilson score interval of a share (99% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def measure(count: int, n: int, expected_count: float) -> dict[str, Any]:
    """A count beside its expectation: share, expected share, 99% interval, z-score."""
    p = expected_count / n if n else 0.0
    sd = math.sqrt(n * p * (1 - p)) if n else 0.0
    low, high = wilson(count, n)
    return {
        "count": count, "n": n, "share": count / n if n else None,
        "expected_share": p if n else None, "expected_count": expected_count,
        "ci99": [low, high], "z": (count - expected_count) / sd if sd > 0 else None,
        "outside_ci99": bool(n and not low <= p <= high),
    }


@nb.njit(cache=True, nogil=True)
def _per_shoe_counts(offsets: np.ndarray, outcome: np.ndarray, p_pair: np.ndarray,
                     b_pair: np.ndarray, natural: np.ndarray, cards: np.ndarray,
                     p_total: np.ndarray, b_total: np.ndarray, out: np.ndarray) -> None:
    """One pass, shoe by shoe: the counts of every measure (-1 in an input means unknown)."""
    for s in range(offsets.shape[0] - 1):
        row = out[s]
        n = pair_n = p_pairs = banker_pair_n = b_pairs = natural_n = naturals = 0
        cards_n = totals_n = 0
        for i in range(offsets[s], offsets[s + 1]):
            n += 1
            row[1 + outcome[i]] += 1
            if p_pair[i] >= 0:
                pair_n += 1
                p_pairs += p_pair[i]
            if b_pair[i] >= 0:
                banker_pair_n += 1
                b_pairs += b_pair[i]
            if natural[i] >= 0:
                natural_n += 1
                naturals += natural[i]
            if cards[i] >= 4:
                cards_n += 1
                row[11 + cards[i] - 4] += 1
            if p_total[i] >= 0 and b_total[i] >= 0:
                totals_n += 1
                row[15 + p_total[i]] += 1
                row[25 + b_total[i]] += 1
        row[0] += n
        row[4] += pair_n
        row[5] += p_pairs
        row[6] += banker_pair_n
        row[7] += b_pairs
        row[8] += natural_n
        row[9] += naturals
        row[10] += cards_n
        row[14] += totals_n


COUNT_COLUMNS = ["n", "B", "P", "T", "pair_n", "player_pair", "banker_pair_n", "banker_pair",
                 "natural_n", "natural", "cards_n", "cards_4", "cards_5", "cards_6",
                 "totals_n", *(f"pt{t}" for t in range(10)), *(f"bt{t}" for t in range(10))]


def grouped(coups: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """Coups grouped by shoe in coup order (sorted only if they are not already), with the
    shoe boundaries (``offsets[s]`` is shoe s's first row; the last entry the row count)."""
    coups, starts = grouped_by_shoe(coups)
    offsets = np.r_[np.flatnonzero(starts), coups.height].astype(np.int64)
    return coups, offsets


def per_shoe_counts(coups: pl.DataFrame, offsets: np.ndarray) -> pl.DataFrame:
    """Counts of every measure per shoe."""
    n_shoes = len(offsets) - 1
    arrays = coups.select(
        pl.col("outcome").to_physical().cast(pl.Int8),
        *(pl.col(c).cast(pl.Int8).fill_null(-1) for c in ("player_pair", "banker_pair",
                                                           "natural")),
        # A reader that already counted the cards (see report.read_for_statistics) passes
        # them as "cards"; otherwise they are counted here.
        (pl.col("cards") if "cards" in coups.columns else
         (pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()))
        .fill_null(0).cast(pl.Int8).alias("cards"),
        pl.col("player_total").fill_null(-1), pl.col("banker_total").fill_null(-1))
    out = np.zeros((n_shoes, len(COUNT_COLUMNS)), dtype=np.int64)
    # Writable always: a column of one chunk comes zero-copy and read-only, which numba
    # compiles apart from a copied one, so a first statistics compiled again after prepare.
    o, pp, bp, nat, cards, pt, bt = (arrays[c].to_numpy(writable=True) for c in arrays.columns)
    _per_shoe_counts(offsets, o, pp, bp, nat, cards, pt, bt, out)
    keys = coups.select(pl.col("table_id", "shoe_id").cast(pl.String))[offsets[:-1]]
    # Int32 per shoe (half the memory a store's worth of shoes holds); sums are Int64
    counts = pl.DataFrame(out.astype(np.int32), schema=COUNT_COLUMNS, orient="row")
    return pl.concat([keys, counts], how="horizontal")


@nb.njit(cache=True, nogil=True)
def _statistics_pass(offsets: np.ndarray, outcome: np.ndarray, p_total: np.ndarray,
                     b_total: np.ndarray, natural: np.ndarray, p_pair: np.ndarray,
                     b_pair: np.ndarray, cards: np.ndarray, dealt_at: np.ndarray,
                     counts: np.ndarray, span: np.ndarray, hist: np.ndarray,
                     per_shoe: np.ndarray, lag_sums: np.ndarray) -> None:
    """Per shoe: the counts of every measure, the dealing span, the sequence figures."""
    _per_shoe_counts(offsets, outcome, p_pair, b_pair, natural, cards, p_total, b_total,
                     counts)
    for s in range(offsets.shape[0] - 1):
        low = high = dealt_at[offsets[s]]
        for i in range(offsets[s] + 1, offsets[s + 1]):
            low = min(low, dealt_at[i])
            high = max(high, dealt_at[i])
        span[s] = high - low
    _pass(outcome, offsets, lag_sums.shape[0], hist, per_shoe, lag_sums)


def statistics_of(cols: ShoeColumns) -> Partial:
    """The statistics partial of a batch (rule sets left out, as
    :func:`roads.stats.partials.partial` without shoes; spans -1 when a coup has no time)."""
    n = cols.shoes
    counts = np.zeros((n, len(COUNT_COLUMNS)), dtype=np.int64)
    span = np.empty(n, dtype=np.int64)
    hist = np.zeros((2, MAX_RUN + 1), dtype=np.int64)
    per_shoe = np.zeros((n, 5), dtype=np.int64)
    lag_sums = np.zeros((LAGS, 4), dtype=np.int64)
    _statistics_pass(cols.offsets, cols.outcome, cols.player_total, cols.banker_total,
                     cols.natural, cols.player_pair, cols.banker_pair, cols.cards,
                     cols.dealt_at, counts, span, hist, per_shoe, lag_sums)
    if not cols.timed:
        span[:] = -1
    # Int16 per shoe (a shoe deals at most 13 coups a deck, decks < 128): a quarter of the
    # memory a store's worth of shoes holds; the sums are Int64
    by_shoe = pl.concat([cols.keys, pl.DataFrame(counts.astype(np.int16), schema=COUNT_COLUMNS,
                                                 orient="row")], how="horizontal")
    return Partial(by_shoe.with_columns(pl.Series("span_us", span, dtype=pl.Int64)),
                   SequenceStats(hist, per_shoe, lag_sums))


def with_rules(part: Partial, shoes: pl.DataFrame) -> Partial:
    """The partial with each shoe's rule set from the shoes table (standard-8 when none is
    recorded). Done once on a combined partial: joining the shoes table to every file's
    partial cost more than counting the coups."""
    decks = pl.col("decks") if "decks" in shoes.columns else pl.lit(None, pl.Int8).alias("decks")
    rules = shoes.select("table_id", "shoe_id", "rules", decks)
    counts = part.by_shoe.drop("rules", "decks", strict=False)
    keys = counts.select("table_id", "shoe_id")  # joined alone: the counts are not copied
    try:  # a store's shoes are listed once: no de-duplication pass over all of them
        found = keys.join(rules, on=["table_id", "shoe_id"], how="left",
                          maintain_order="left", validate="m:1")
    except pl.exceptions.PolarsError:  # a shoe listed twice
        found = keys.join(rules.unique(["table_id", "shoe_id"]), on=["table_id", "shoe_id"],
                          how="left", maintain_order="left")
    by_shoe = counts.with_columns(found["rules"].fill_null("standard-8"), found["decks"])
    return Partial(by_shoe, part.sequence)


@dataclass(frozen=True)
class Partial:
    """What the statistics need from a batch of whole shoes.

    Partials of disjoint batches combine exactly: per-shoe rows are concatenated and the
    sequence sums added, so a dataset can be summarised file by file (or partition by
    partition on a cluster) and give the same figures as all at once.
    """

    by_shoe: pl.DataFrame  # table_id, shoe_id, COUNT_COLUMNS, span_us (-1: unknown), rules
    sequence: SequenceStats


def partial(coups: pl.DataFrame, shoes: pl.DataFrame | None,
            grouping: tuple[pl.DataFrame, np.ndarray] | None = None) -> Partial:
    """The partial of a batch of coups (``grouping``: :func:`grouped`, if already done).

    Without ``shoes`` the rule sets are left out, for :func:`with_rules` to add once after
    partials are combined."""
    coups, offsets = grouping if grouping is not None else grouped(coups)
    by_shoe = per_shoe_counts(coups, offsets)
    times = coups["dealt_at"]
    if len(offsets) > 1 and times.null_count() == 0:
        us = times.dt.epoch("us").to_numpy()
        span = np.maximum.reduceat(us, offsets[:-1]) - np.minimum.reduceat(us, offsets[:-1])
    else:
        span = np.full(len(offsets) - 1, -1, dtype=np.int64)
    by_shoe = by_shoe.with_columns(pl.Series("span_us", span, dtype=pl.Int64))
    seq = sequence_stats(coups["outcome"].to_physical().to_numpy(), offsets)
    return Partial(by_shoe, seq) if shoes is None else with_rules(Partial(by_shoe, seq), shoes)


def combine(parts: list[Partial]) -> Partial:
    """One partial from many (exact: sums and concatenations only)."""
    return Partial(
        pl.concat([p.by_shoe for p in parts], how="vertical_relaxed"),
        SequenceStats(
            hist=sum((p.sequence.hist for p in parts), np.zeros_like(parts[0].sequence.hist)),
            per_shoe=np.vstack([p.sequence.per_shoe for p in parts]),
            lag_sums=sum((p.sequence.lag_sums for p in parts),
                         np.zeros_like(parts[0].sequence.lag_sums)),
        ),
    )


def outcome_statistics(coups: pl.DataFrame, shoes: pl.DataFrame) -> dict[str, Any]:
    """Counts and shares of every outcome a board prints, each against its expectation."""
    if coups.is_empty():
        return {"coups": 0, "shoes": 0}
    return finalize(partial(coups, shoes))


def in_shoe_order(part: Partial) -> Partial:
    """The partial with its shoes sorted by key, so that every float sum is the same
    whichever way the partials were produced: one process, file by file, or a cluster."""
    order = part.by_shoe.select(pl.arg_sort_by("table_id", "shoe_id")).to_series().to_numpy()
    return Partial(part.by_shoe[order], SequenceStats(
        part.sequence.hist, part.sequence.per_shoe[order], part.sequence.lag_sums))


def finalize(part: Partial) -> dict[str, Any]:
    """The statistics of a (combined) partial."""
    by_shoe = part.by_shoe
    if by_shoe.is_empty():
        return {"coups": 0, "shoes": 0}
    part = in_shoe_order(part)
    by_shoe = part.by_shoe
    decks = pl.col("decks").first() if "decks" in by_shoe.columns else pl.lit(None)
    groups = by_shoe.group_by("rules").agg(pl.col(COUNT_COLUMNS).cast(pl.Int64).sum(),
                                           decks.alias("decks")
                                           ).sort("rules").to_dicts()
    exps = {g["rules"]: expectation(g["rules"], g["decks"]) for g in groups}

    def total(key: str) -> int:
        return int(sum(g[key] or 0 for g in groups))

    def expected(n_key: str, prob: Any) -> float:
        return float(sum(g[n_key] * prob(exps[g["rules"]]) for g in groups))

    n = total("n")
    result: dict[str, Any] = {
        "coups": n,
        "shoes": by_shoe.height,
        "rules": sorted(exps),
        "outcomes": {name: measure(total(o), n, expected("n", lambda e, o=o: e.outcome[o]))
                     for o, name in (("B", "banker"), ("P", "player"), ("T", "tie"))},
        "pairs": {
            "player": measure(total("player_pair"), total("pair_n"),
                              expected("pair_n", lambda e: e.pair)),
            "banker": measure(total("banker_pair"), total("banker_pair_n"),
                              expected("banker_pair_n", lambda e: e.pair)),
        },
        "naturals": measure(total("natural"), total("natural_n"),
                            expected("natural_n", lambda e: e.natural)),
        "cards_per_coup": {str(c): measure(total(f"cards_{c}"), total("cards_n"),
                                           expected("cards_n", lambda e, c=c: e.cards[c]))
                           for c in (4, 5, 6)},
        "final_totals": {
            side: [measure(total(f"{key}{t}"), total("totals_n"),
                           expected("totals_n", lambda e, t=t, side=side:
                                    (e.player_total if side == "player" else e.banker_total)[t]))
                   for t in range(10)]
            for side, key in (("player", "pt"), ("banker", "bt"))
        },
        "streaks": streaks(part.sequence),
        "pace": pace(by_shoe),
    }
    return result


def streaks(seq: SequenceStats) -> dict[str, Any]:
    """Longest runs and the run-length distribution against independent coups."""
    n_b = int(seq.per_shoe[:, 0].sum())
    n_p = int(seq.per_shoe[:, 1].sum())
    q = n_b / (n_b + n_p) if n_b + n_p else 0.5
    expected = expected_runs(seq.per_shoe[:, 0] + seq.per_shoe[:, 1], q)

    def longest(side: int) -> int:
        return int(seq.per_shoe[:, 3 + side].max()) if len(seq.per_shoe) else 0

    return {
        "longest_banker_run": longest(0), "longest_player_run": longest(1),
        "runs": int(seq.per_shoe[:, 2].sum()),
        "run_length_distribution": {
            side: {(f"{k}+" if k == MAX_RUN else str(k)): {
                "observed": int(seq.hist[i, k]), "expected": float(expected[i, k])}
                for k in range(1, MAX_RUN + 1)}
            for i, side in enumerate(("banker", "player"))
        },
    }


def pace(by_shoe: pl.DataFrame) -> dict[str, Any]:
    """Coups per shoe, and per hour of dealing. No rate when some shoe's span is unknown
    (a coup without its time): a rate over the timed part alone would read as the whole
    slice's. Decided here, on the combined rows, so every engine agrees however it cut
    the slice into files, pieces or partitions."""
    coups = by_shoe["n"].to_numpy()
    span = by_shoe["span_us"].to_numpy()
    timed = span > 0
    hours = float(span[timed].sum()) / 3.6e9 if not (span < 0).any() else 0.0
    return {
        "coups_per_shoe": {"mean": float(coups.mean()), "min": int(coups.min()),
                           "max": int(coups.max())},
        "coups_per_hour": float(coups[timed].sum()) / hours if hours else None,
    }
