"""Exact next-coup odds for any shoe composition, in exact integers.

Convention (Wizard of Odds): count ordered 6-card sequences drawn without replacement; a coup
that ends after 4 or 5 cards counts once for every way its unused positions could be filled.

Why it is fast: the outcome of every ordered sequence of point values is fixed by the
tableau; only its weight depends on the composition, and that weight depends only on the
*multiset* of values the coup used and on how many cards it used. So the ~10^6 value
sequences collapse, once, into ~7,700 groups ``(cards used L, multiset)`` with an integer
coefficient per statistic. Odds for one composition are then a weighted sum over the groups:
each weight is a product of six falling-factorial factors, all exact in int64 for shoes of up
to 16 decks (larger explicit compositions fall back to Python integers). The groups are
computed once and kept in the cache directory (:mod:`roads.cache`), so a new process reads them
in about a millisecond; the sum itself needs no compiled code (:mod:`roads.odds_compiled`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from roads import tableau
from roads.cache import cache_dir
from roads.cards import RANK_POINTS, RANKS, card_index, parse_cards
from roads.errors import InputError
from roads.rules import MAX_DECKS, RuleSet
from roads.tableau import BANKER_DRAWS, PLAYER_DRAWS

#: Statistics of the fast path, in kernel row order: outcomes, side outcomes, naturals,
#: cards per coup.
CORE_STATS: tuple[str, ...] = (
    "banker", "player", "tie",
    "dragon7", "panda8",
    "banker_natural_8", "banker_natural_9", "player_natural_8", "player_natural_9",
    "at_least_one_natural",
    "cards_4", "cards_5", "cards_6",
)
#: Everything: the core plus the distribution of final totals (for statistics).
STATS: tuple[str, ...] = (
    *CORE_STATS,
    *(f"player_total_{t}" for t in range(10)),
    *(f"banker_total_{t}" for t in range(10)),
)
ROW = {name: i for i, name in enumerate(STATS)}
#: int64 is exact while the number of ordered 6-card sequences stays below 2**63.
_INT64_LIMIT = 2**63 - 1
#: float64 is exact while it stays below 2**53 (an 8-deck shoe has 4.998e15 < 9.007e15).
#: The most cards of one rank a composition may hold: four suits of the largest shoe.
MAX_RANK_COUNT = 4 * MAX_DECKS
_FLOAT_EXACT_LIMIT = 2**53


class CompositionError(InputError):
    """An impossible shoe composition (negative counts, too many copies, too few cards)."""


@dataclass(frozen=True)
class _Groups:
    """The precomputed ``(L, multiset)`` groups of the enumeration."""

    factor_index: np.ndarray  # (G, 6) indices into the per-composition factor vector
    coefs_t: np.ndarray  # (len(STATS), G) int64: value sequences of each group with each stat
    coefs_t_f64: np.ndarray  # the same as float64 (the fast, exact-to-8-decks path)

    @functools.cached_property
    def factor_columns(self) -> tuple[np.ndarray, ...]:
        """The six columns of ``factor_index`` as contiguous index arrays (numpy path)."""
        return tuple(np.ascontiguousarray(self.factor_index[:, j], dtype=np.intp)
                     for j in range(6))


def _sequence_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every distinct deal: values (D, 6), cards used L, statistic flags.

    A deal of L < 6 cards stands for the 10**(6-L) sequences that share its first L values;
    it is kept once, with the unused positions zero (so no count needs dividing out).
    """
    grid = np.indices((10,) * 6, dtype=np.int16).reshape(6, -1).T  # deal order
    p1, b1, p2, b2, c5, c6 = (grid[:, i] for i in range(6))
    p_two = (p1 + p2) % 10
    b_two = (b1 + b2) % 10
    natural = (p_two >= 8) | (b_two >= 8)
    p_draw = ~natural & PLAYER_DRAWS[p_two]
    p_third = np.where(p_draw, c5, 10)
    b_draw = ~natural & BANKER_DRAWS[b_two, p_third]
    used = 4 + p_draw.astype(np.int16) + b_draw.astype(np.int16)
    keep = ((used > 4) | (c5 == 0)) & ((used > 5) | (c6 == 0))
    grid, used = grid[keep], used[keep]
    p_two, b_two, natural, p_draw, b_draw, c5, c6 = (
        a[keep] for a in (p_two, b_two, natural, p_draw, b_draw, c5, c6))
    b_third = np.where(p_draw, c6, c5)
    p_final = np.where(p_draw, (p_two + c5) % 10, p_two)
    b_final = np.where(b_draw, (b_two + b_third) % 10, b_two)
    flags = np.zeros((grid.shape[0], len(STATS)), dtype=np.bool_)
    flags[:, ROW["banker"]] = b_final > p_final
    flags[:, ROW["player"]] = p_final > b_final
    flags[:, ROW["tie"]] = p_final == b_final
    flags[:, ROW["dragon7"]] = b_draw & (b_final == 7) & (b_final > p_final)
    flags[:, ROW["panda8"]] = p_draw & (p_final == 8) & (p_final > b_final)
    flags[:, ROW["banker_natural_8"]] = b_two == 8
    flags[:, ROW["banker_natural_9"]] = b_two == 9
    flags[:, ROW["player_natural_8"]] = p_two == 8
    flags[:, ROW["player_natural_9"]] = p_two == 9
    flags[:, ROW["at_least_one_natural"]] = natural
    for n in (4, 5, 6):
        flags[:, ROW[f"cards_{n}"]] = used == n
    for t in range(10):
        flags[:, ROW[f"player_total_{t}"]] = p_final == t
        flags[:, ROW[f"banker_total_{t}"]] = b_final == t
    return grid, used, flags


def _groups_file() -> Path:
    """The cached groups, named after the sources that define them (this file, the tableau)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(Path(tableau.__file__).read_bytes())
    return cache_dir() / f"odds-groups-{digest.hexdigest()[:16]}.npz"


@functools.cache
def _groups() -> _Groups:
    """The groups, from the cache directory when an earlier process computed them (the
    enumeration takes ~0.2 s; loading ~1 ms)."""
    path = _groups_file()
    try:
        with np.load(path) as saved:
            factor_index, coefs_t = saved["factor_index"], saved["coefs_t"]
    except (OSError, KeyError, ValueError):
        factor_index, coefs_t = _enumerate_groups()
        _save_groups(path, factor_index, coefs_t)
    return _Groups(factor_index, coefs_t, coefs_t.astype(np.float64))


def _save_groups(path: Path, factor_index: np.ndarray, coefs_t: np.ndarray) -> None:
    from roads.cache import save_arrays

    with contextlib.suppress(OSError):  # a read-only cache: computed again next time
        save_arrays(path, factor_index=factor_index, coefs_t=coefs_t)


def _enumerate_groups() -> tuple[np.ndarray, np.ndarray]:
    grid, used, flags = _sequence_table()
    # Group key: cards used, then the multiset of used values as base-7 digits (a value
    # occurs at most 6 times, so digit v is exactly its multiplicity).
    key = used.astype(np.int64) * 7**10
    for pos in range(6):
        key += np.where(used > pos, 7 ** grid[:, pos].astype(np.int64), 0)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    by_stat = np.ascontiguousarray(flags.T)
    counts = np.stack([np.bincount(inverse, weights=row, minlength=len(first))
                       for row in by_stat], axis=1).astype(np.int64)
    # Factor vector per composition: f[v*6 + j] = c_v - j, f[60] = N-4, f[61] = N-5, f[62] = 1.
    # A group's k-th used value v (sorted) is its j-th copy of v: factor v*6 + j.
    g_used = used[first][:, None]
    values = np.where(np.arange(6) < g_used, grid[first], 10)
    values.sort(axis=1)
    copy = np.zeros_like(values)
    for k in range(1, 6):
        copy[:, k] = (values[:, :k] == values[:, k:k + 1]).sum(axis=1)
    factor_index = np.where(values < 10, values * 6 + copy, 62).astype(np.uint8)
    factor_index[:, 4] = np.where(g_used[:, 0] == 4, 60, factor_index[:, 4])
    factor_index[:, 5] = np.where(g_used[:, 0] <= 5, 61, factor_index[:, 5])
    return np.ascontiguousarray(factor_index), np.ascontiguousarray(counts.T)


def _ways_numpy(values: np.ndarray, g: _Groups, coefs: np.ndarray) -> np.ndarray:
    """``coefs @ weights`` for one composition with numpy alone (``values``' dtype picks the
    arithmetic, as in the compiled kernel): the same exact integers, without loading numba."""
    f = np.empty(63, dtype=values.dtype)
    f[:60] = np.maximum(values[:, None] - np.arange(6), 0).ravel()
    n = values.sum()
    f[60], f[61], f[62] = n - 4, n - 5, 1
    w = f[g.factor_columns[0]]
    for column in g.factor_columns[1:]:
        w = w * f[column]
    result: np.ndarray = coefs @ w
    return result


def _ways_raw(values: list[int], n_stats: int) -> list[int]:
    """Exact ways for the first ``n_stats`` statistics, choosing exact arithmetic by size."""
    g = _groups()
    size = falling(sum(values), 6)
    if size <= _INT64_LIMIT:
        float_ok = size < _FLOAT_EXACT_LIMIT
        dtype = np.float64 if float_ok else np.int64
        coefs = (g.coefs_t_f64 if float_ok else g.coefs_t)[:n_stats]
        counts = np.array(values, dtype=np.int64)
        if "numba" in sys.modules:  # compiled code is loaded already: the faster sum
            from roads.odds_compiled import ways_kernel

            out = np.empty(n_stats, dtype=dtype)
            ways_kernel(counts, g.factor_index, coefs, out)
        else:
            out = _ways_numpy(counts.astype(dtype), g, coefs)
        exact: list[int] = out.astype(np.int64).tolist()
        return exact
    n = sum(values)
    f = [max(values[v] - j, 0) for v in range(10) for j in range(6)] + [n - 4, n - 5, 1]
    big = [0] * n_stats
    for gi, idx in enumerate(g.factor_index.tolist()):
        w_big = f[idx[0]] * f[idx[1]] * f[idx[2]] * f[idx[3]] * f[idx[4]] * f[idx[5]]
        if w_big:
            for s in range(n_stats):
                big[s] += int(g.coefs_t[s, gi]) * w_big
    return big


def falling(n: int, k: int) -> int:
    """``n (n-1) ... (n-k+1)``."""
    result = 1
    for i in range(k):
        result *= n - i
    return result


def values_from_ranks(rank_counts: Sequence[int]) -> np.ndarray:
    """Collapse 13 rank counts (A..K) into 10 point-value counts (index = value)."""
    values = np.zeros(10, dtype=np.int64)
    for r, count in enumerate(rank_counts):
        values[RANK_POINTS[r]] += count
    return values


def ways(values: Sequence[int] | np.ndarray, detail: bool = False) -> dict[str, int]:
    """Exact ways for every statistic from 10 point-value counts (index = point value).

    The core statistics (:data:`CORE_STATS`) always; with ``detail`` also the distribution
    of final totals.
    """
    vals = [int(v) for v in values]
    _check_values(vals)
    names = STATS if detail else CORE_STATS
    return dict(zip(names, _ways_raw(vals, len(names)), strict=True))


def ways_batch(values: np.ndarray, detail: bool = False) -> np.ndarray:
    """Exact ways for many compositions at once: ``(K, 10)`` counts -> ``(K, stats)`` int64.

    Columns follow :data:`CORE_STATS` (or :data:`STATS` with ``detail``). Runs in parallel
    over compositions; each must hold at most 8 decks' worth of cards (float64-exact), as
    every shoe in play does.
    """
    vals = np.ascontiguousarray(values, dtype=np.int64)
    if vals.ndim != 2 or vals.shape[1] != 10:
        raise CompositionError("batch compositions must have shape (K, 10)")
    if (vals < 0).any():
        raise CompositionError("a composition has a negative count")
    totals = vals.sum(axis=1)
    if len(totals) and (
        totals.min() < 6 or falling(int(totals.max()), 6) >= _FLOAT_EXACT_LIMIT
    ):
        raise CompositionError("batch compositions need between 6 and 416 cards")
    from roads.odds_compiled import ways_batch_kernel

    g = _groups()
    n_stats = len(STATS if detail else CORE_STATS)
    out = np.empty((vals.shape[0], n_stats), dtype=np.float64)
    ways_batch_kernel(vals, g.factor_index, g.coefs_t_f64[:n_stats], out)
    return out.astype(np.int64)


def _check_values(values: list[int]) -> None:
    if len(values) != 10:
        raise CompositionError("a composition needs 10 point-value counts")
    if min(values) < 0:
        raise CompositionError(f"negative count for point value {values.index(min(values))}")
    if sum(values) < 6:
        raise CompositionError(f"a coup needs 6 cards in the shoe, only {sum(values)} left")


@dataclass(frozen=True)
class Composition:
    """What is left in a shoe: 13 rank counts (A..K).

    Rank counts (not only point values) are kept because pair bets depend on rank.
    """

    ranks: tuple[int, ...]

    @classmethod
    def full(cls, decks: int) -> Composition:
        return cls(tuple([4 * decks] * 13))

    @classmethod
    def after_seen(cls, decks: int, seen: Iterable[str]) -> Composition:
        """A full shoe minus the cards seen; refuses more copies of a card than the decks hold."""
        per_card = np.zeros(52, dtype=np.int64)
        for code in seen:
            per_card[card_index(code)] += 1
        over = np.nonzero(per_card > decks)[0]
        if len(over):
            from roads.cards import CARD_CODES

            code = CARD_CODES[int(over[0])]
            raise CompositionError(
                f"card {code} seen {int(per_card[over[0]])} times, but {decks} deck(s) hold "
                f"only {decks}"
            )
        ranks = [4 * decks - int(per_card[r * 4 : r * 4 + 4].sum()) for r in range(13)]
        return cls(tuple(ranks))

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], require_all: bool = False) -> Composition:
        """Explicit counts by rank (``A``, ``2``..``9``, ``10`` or ``T``, ``J``, ``Q``, ``K``);
        the key ``*`` gives the count of every rank not named.

        Ranks left out are 0 — or, with ``require_all``, refused with a message naming them
        (someone typing a composition who leaves a rank out has most likely forgotten it).
        """
        given: list[int | None] = [None] * 13
        rest = counts.get("*")
        for key, count in counts.items():
            if key == "*":
                continue
            rank = "T" if key.upper() == "10" else key.upper()
            if rank not in RANKS:
                raise CompositionError(f"unknown rank {key!r} in composition")
            if given[RANKS.index(rank)] is not None:
                raise CompositionError(f"rank {_rank_label(rank)} given twice")
            if count < 0:
                raise CompositionError(f"negative count {count} for rank {rank}")
            if count > MAX_RANK_COUNT:
                raise CompositionError(f"count {count:,} for rank {rank} is more than a shoe "
                                       f"holds (at most {MAX_RANK_COUNT}: {MAX_DECKS} decks)")
            given[RANKS.index(rank)] = count
        if rest is not None and rest < 0:
            raise CompositionError(f"negative count {rest} for * (the ranks not named)")
        if rest is not None and rest > MAX_RANK_COUNT:
            raise CompositionError(f"count {rest:,} for * is more than a shoe holds (at most "
                                   f"{MAX_RANK_COUNT} of a rank: {MAX_DECKS} decks)")
        missing = [_rank_label(RANKS[i]) for i, c in enumerate(given) if c is None]
        if missing and rest is None and require_all:
            raise CompositionError(
                f"no count for rank{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                "(give every rank, or *=N for all the ranks not named, e.g. *=0)")
        return cls(tuple(rest or 0 if c is None else c for c in given))

    @property
    def cards(self) -> int:
        return sum(self.ranks)

    @property
    def values(self) -> np.ndarray:
        return values_from_ranks(self.ranks)

    def without(self, value: int) -> Composition:
        """The composition minus one card of point value ``value`` (for effects of removal)."""
        ranks = list(self.ranks)
        candidates = [r for r in range(13) if RANK_POINTS[r] == value and ranks[r] > 0]
        if not candidates:
            raise CompositionError(f"no card of value {value} left to remove")
        ranks[max(candidates, key=lambda r: ranks[r])] -= 1
        return Composition(tuple(ranks))


@dataclass(frozen=True)
class Odds:
    """Exact next-coup figures for one composition under one rule set."""

    composition: Composition
    ways: dict[str, int]
    pair_ways: tuple[int, int]  # (ordered 2-card pairs, ordered 2-card draws)

    @property
    def total(self) -> int:
        return self.ways["banker"] + self.ways["player"] + self.ways["tie"]

    def probability(self, stat: str) -> Fraction:
        return Fraction(self.ways[stat], self.total)

    @property
    def pair_probability(self) -> Fraction:
        pairs, draws = self.pair_ways
        return Fraction(pairs, draws)

    def house_edges(self, rules: RuleSet) -> dict[str, Fraction]:
        """Exact house edge (expected loss per unit staked) of every bet the rules offer."""
        b, p, t, tot = self.ways["banker"], self.ways["player"], self.ways["tie"], self.total
        d7, p8 = self.ways["dragon7"], self.ways["panda8"]
        banker_paid = b - d7 if rules.ez_push else b
        edges = {
            "banker": -Fraction(rules.banker_net * banker_paid - p, tot),
            "player": -Fraction(rules.player_payout * p - b, tot),
            "tie": -Fraction(rules.tie_payout * t - (b + p), tot),
        }
        if rules.pair_payout is not None:
            q = self.pair_probability
            edge = -(rules.pair_payout * q - (1 - q))
            edges["player_pair"] = edge
            edges["banker_pair"] = edge
        if rules.dragon7_payout is not None:
            edges["dragon7"] = -Fraction(rules.dragon7_payout * d7 - (tot - d7), tot)
        if rules.panda8_payout is not None:
            edges["panda8"] = -Fraction(rules.panda8_payout * p8 - (tot - p8), tot)
        return edges

    def to_dict(self, rules: RuleSet) -> dict[str, Any]:
        """The JSON contract: exact integers in ``ways``, floats elsewhere."""
        w = self.ways
        return {
            "rules": rules.name,
            "cards": self.composition.cards,
            "composition": dict(zip(RANKS, self.composition.ranks, strict=True)),
            "ways": {"banker": w["banker"], "player": w["player"], "tie": w["tie"],
                     "total": self.total},
            "probability": {
                k: float(self.probability(k)) for k in ("banker", "player", "tie")
            } | {"pair": float(self.pair_probability)},
            "house_edge": {k: float(v) for k, v in self.house_edges(rules).items()},
            "pair_probability": f"{self.pair_probability.numerator}/"
            f"{self.pair_probability.denominator}",
            "naturals": {k: w[k] for k in (
                "banker_natural_8", "banker_natural_9", "player_natural_8", "player_natural_9",
                "at_least_one_natural")},
            "cards_per_coup": {str(n): w[f"cards_{n}"] for n in (4, 5, 6)},
            "side_outcomes": {"dragon7": w["dragon7"], "panda8": w["panda8"]},
        } | ({
            "final_totals": {
                "player": [w[f"player_total_{t}"] for t in range(10)],
                "banker": [w[f"banker_total_{t}"] for t in range(10)],
            }
        } if "player_total_0" in w else {})


def exact_odds(composition: Composition, detail: bool = False) -> Odds:
    """Exact next-coup odds for a composition (``detail`` adds final-total distributions)."""
    ranks = composition.ranks
    if any(c < 0 for c in ranks):
        raise CompositionError("a composition has a negative count")
    n = sum(ranks)
    pairs = sum(c * (c - 1) for c in ranks)
    return Odds(composition, ways(values_from_ranks(ranks), detail), (pairs, n * (n - 1)))


def effects_of_removal(composition: Composition, rules: RuleSet) -> dict[str, dict[str, float]]:
    """How removing one card of each point value moves the probabilities and house edges."""
    base = exact_odds(composition)
    base_edges = base.house_edges(rules)
    result: dict[str, dict[str, float]] = {}
    for value in range(10):
        try:
            after = exact_odds(composition.without(value))
        except CompositionError:
            continue
        edges = after.house_edges(rules)
        label = "A" if value == 1 else str(value)
        result[label] = {
            **{f"delta_p_{k}": float(after.probability(k) - base.probability(k))
               for k in ("banker", "player", "tie")},
            **{f"delta_edge_{k}": float(edges[k] - base_edges[k]) for k in base_edges},
        }
    return result


def _rank_label(rank: str) -> str:
    return "10" if rank == "T" else rank


def seen_from_text(text: str) -> list[str]:
    """Cards seen, from a leniently written list (``"As Kd 9c"``, ``"10h,2S"``)."""
    return parse_cards(text)
