"""Integrity checks on card-level data: what surveillance looks for in a shoe.

Each finding names the check, a severity, the shoe and the coups it concerns, and says in
plain words what was seen. Checks: the tableau replayed on every coup (and totals, outcome,
natural and pair flags against the cards), the card inventory of each shoe, the burn against
the exposed first card, the end-of-shoe rule against the cut card, repeated or
near-repeated card sequences across shoes (a shoe dealt twice, an unshuffled pack), and long
ordered runs of suits or ranks inside a shoe (cards in deck order).
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np
import polars as pl

from roads import replay as k
from roads.cards import CARD_CODES, RANK_BURN
from roads.schema import conform
from roads.stats.expect import shoe_rules
from roads.stats.partials import grouped

NONE = 255
_WINDOW = 8  # cards per fingerprint window
_SAMPLE = 8  # keep one window hash in _SAMPLE (chosen by content, so offsets do not matter)
#: Point value of each card slot code (rank * 4 + suit); -1 for an empty slot.
_POINTS = np.full(256, -1, dtype=np.int16)
_POINTS[:52] = [(r + 1) if r < 9 else 0 for r in np.arange(52) // 4]


@nb.njit(cache=True)
def _shoe_pass(p: np.ndarray, b: np.ndarray, offsets: np.ndarray, decks: np.ndarray,
               burned: np.ndarray, cut: np.ndarray, last_coup_rule: np.ndarray,
               over: np.ndarray, runs: np.ndarray, end: np.ndarray,
               fp_shoe: np.ndarray, fp_hash: np.ndarray) -> int:
    """Per shoe: inventory, longest suit / ascending-rank runs, end rule; fingerprints.

    Returns the number of fingerprints written.
    """
    n_fp = 0
    seq = np.empty(6 * (offsets[-1] - offsets[0]) + 6, dtype=np.int64)
    starts = np.empty(offsets[-1] - offsets[0] + 1, dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        counts = np.zeros(52, dtype=np.int64)
        m = 0
        for c, i in enumerate(range(offsets[s], offsets[s + 1])):
            starts[c] = m
            for j in range(3):
                if p[i, j] != NONE:
                    seq[m] = p[i, j]
                    m += 1
                if b[i, j] != NONE:
                    seq[m] = b[i, j]
                    m += 1
        coups = offsets[s + 1] - offsets[s]
        for t in range(m):
            counts[seq[t]] += 1
        worst = 0
        for card in range(52):
            if counts[card] > decks[s] and counts[card] > counts[worst]:
                worst = card
        over[s, 0] = worst if counts[worst] > decks[s] else -1
        over[s, 1] = counts[worst]
        best_suit = 1
        best_rank = 1
        run_suit = 1
        run_rank = 1
        for t in range(1, m):
            run_suit = run_suit + 1 if seq[t] % 4 == seq[t - 1] % 4 else 1
            run_rank = run_rank + 1 if seq[t] // 4 == seq[t - 1] // 4 + 1 else 1
            best_suit = max(best_suit, run_suit)
            best_rank = max(best_rank, run_rank)
        runs[s, 0] = best_suit if m else 0
        runs[s, 1] = best_rank if m else 0
        end[s] = -1
        if cut[s] >= 0 and coups >= 2:
            first_of_last = burned[s] + starts[coups - 1]
            first_of_prev = burned[s] + starts[coups - 2]
            if last_coup_rule[s] == 0:  # finish-plus-one
                end[s] = 0 if first_of_last >= cut[s] and first_of_prev < cut[s] else 1
            elif last_coup_rule[s] == 1:  # last-coup
                last_card = burned[s] + m - 1
                end[s] = 0 if last_card >= cut[s] and first_of_last - 1 < cut[s] else 1
        h = np.uint64(0)
        for t in range(m - _WINDOW + 1):
            h = np.uint64(1469598103934665603)
            for u in range(_WINDOW):
                h = (h ^ np.uint64(seq[t + u])) * np.uint64(1099511628211)
            if h % np.uint64(_SAMPLE) == 0 and n_fp < fp_hash.shape[0]:
                fp_shoe[n_fp] = s
                fp_hash[n_fp] = h
                n_fp += 1
    return n_fp


def _finding(check: str, severity: str, table: str, shoe: str, coups: list[int],
             text: str) -> dict[str, Any]:
    return {"check": check, "severity": severity, "table_id": table, "shoe_id": shoe,
            "coups": coups, "explanation": text}


_ROW_CHECKS = [
    (k.F_PLAYER_TABLEAU, "tableau", "high", "the Player drew or stood against the tableau"),
    (k.F_BANKER_TABLEAU, "tableau", "high", "the Banker drew or stood against the tableau"),
    (k.F_OUTCOME, "outcome", "high", "the recorded outcome does not follow from the cards"),
    (k.F_PLAYER_TOTAL, "totals", "high", "the Player total does not match the cards"),
    (k.F_BANKER_TOTAL, "totals", "high", "the Banker total does not match the cards"),
    (k.F_NATURAL, "flags", "medium", "the natural flag contradicts the cards"),
    (k.F_PLAYER_PAIR, "flags", "medium", "the Player pair flag contradicts the cards"),
    (k.F_BANKER_PAIR, "flags", "medium", "the Banker pair flag contradicts the cards"),
]


def _slots(coups: pl.DataFrame, side: str) -> np.ndarray:
    return coups.select(
        pl.col(f"{side}_cards").list.get(i, null_on_oob=True).to_physical().fill_null(NONE)
        .cast(pl.UInt8).alias(f"c{i}") for i in range(3)).to_numpy()


#: Fingerprints kept per shoe for the repeated-shoe check: the smallest sampled window
#: hashes (a bottom-k sketch). Two copies of a shoe have the same sketch; unrelated shoes
#: share none. This bounds the state carried across batches to ~0.4 KB a shoe.
SKETCH = 24


def integrity_checks(coups: pl.DataFrame, shoes: pl.DataFrame,
                     repeat_threshold: float = 0.5) -> list[dict[str, Any]]:
    """Every finding on the card-level coups of a slice (outcome-only coups are skipped)."""
    scan = IntegrityScan(shoes, repeat_threshold)
    scan.add(coups)
    return scan.findings()


class IntegrityScan:
    """The integrity checks over batches of whole shoes (a store's files one at a time), so
    memory holds one batch and each shoe's sketch, whatever the size of the store.

    A shoe's checks need all of its coups in one batch; :meth:`add` notes a shoe met in two
    batches (an import in pieces), and :meth:`split_shoes` lists them for the caller to add
    again, read whole (their earlier findings are replaced)."""

    def __init__(self, shoes: pl.DataFrame, repeat_threshold: float = 0.5) -> None:
        self.shoes = conform(shoes, "shoes").unique(["table_id", "shoe_id"])
        self.threshold = repeat_threshold
        self._findings: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._sketches: dict[tuple[str, str], np.ndarray] = {}
        self._split: set[tuple[str, str]] = set()

    def add(self, coups: pl.DataFrame, whole: bool = False) -> None:
        """Check a batch of coups (``whole``: these shoes' every coup, replacing what earlier
        batches found of them)."""
        cards = coups.filter(pl.col("player_cards").is_not_null()
                             & pl.col("banker_cards").is_not_null())
        if cards.is_empty():
            return
        cards, offsets = grouped(cards)
        keys = [(str(t), str(s)) for t, s in cards.select("table_id", "shoe_id")
                [offsets[:-1]].iter_rows()]
        if not whole:
            self._split.update(k for k in keys if k in self._findings)
        for key in keys:
            self._findings[key] = []
        p = np.ascontiguousarray(_slots(cards, "player"))
        b = np.ascontiguousarray(_slots(cards, "banker"))
        for f in _row_findings(cards, p, b):
            self._findings[(f["table_id"], f["shoe_id"])].append(f)
        for key, found, sketch in _shoe_findings(cards, offsets, p, b, self.shoes, keys):
            self._findings[key] += found
            self._sketches[key] = sketch

    def split_shoes(self) -> set[tuple[str, str]]:
        return set(self._split)

    def findings(self) -> list[dict[str, Any]]:
        out = [f for found in self._findings.values() for f in found]
        return out + _repeats(self._sketches, self.threshold)


def _shoe_findings(cards: pl.DataFrame, offsets: np.ndarray, p: np.ndarray, b: np.ndarray,
                   known: pl.DataFrame, ids: list[tuple[str, str]]
                   ) -> list[tuple[tuple[str, str], list[dict[str, Any]], np.ndarray]]:
    """Per shoe of one batch: its inventory, burn, end-rule and ordered-run findings, and
    the sketch of its card sequence."""
    keys = cards.select("table_id", "shoe_id")[offsets[:-1]]
    info = keys.join(known, on=["table_id", "shoe_id"], how="left", maintain_order="left")
    rules = [shoe_rules(r, d) for r, d in zip(info["rules"].to_list(), info["decks"].to_list(),
                                               strict=True)]
    decks = np.array([r.decks for r in rules], dtype=np.int64)
    burned = info["burn_cards"].list.len().fill_null(0).to_numpy().astype(np.int64)
    exposed = info["burn_cards"].list.first().cast(pl.String).to_list()  # None: no burn
    # The end rule can only be judged on a complete shoe (all its recorded coups present).
    complete = (info["coups"].fill_null(-1).to_numpy() == np.diff(offsets))
    cut = np.where(complete, info["cut_card_index"].fill_null(-1).to_numpy(), -1) \
        .astype(np.int64)
    end_rule = np.array([(0 if r.end_rule == "finish-plus-one" else 1) if x else -1
                         for r, x in zip(rules, exposed, strict=True)], dtype=np.int64)
    n = len(offsets) - 1
    over = np.zeros((n, 2), dtype=np.int64)
    runs = np.zeros((n, 2), dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    cap = int(6 * cards.height / _SAMPLE * 2 + 64)
    fp_shoe = np.zeros(cap, dtype=np.int64)
    fp_hash = np.zeros(cap, dtype=np.uint64)
    used = _shoe_pass(p, b, offsets, decks, burned, cut, end_rule, over, runs, end, fp_shoe,
                      fp_hash)
    sketches = _bottom(fp_shoe[:used], fp_hash[:used], n)
    out = []
    for s, (table, shoe) in enumerate(ids):
        found = []
        coups_in_shoe = int(offsets[s + 1] - offsets[s])
        if over[s, 0] >= 0:
            found.append(_finding(
                "inventory", "high", table, shoe, [],
                f"card {CARD_CODES[over[s, 0]]} appears {over[s, 1]} times, but "
                f"{decks[s]} deck(s) hold only {decks[s]}"))
        first = exposed[s]
        if first:
            want = RANK_BURN["A23456789TJQK".index(first[0])]
            if burned[s] - 1 != want:
                found.append(_finding(
                    "burn", "medium", table, shoe, [],
                    f"the exposed {first} calls for {want} burned card(s), but "
                    f"{burned[s] - 1} were burned"))
        if end[s] == 1:
            found.append(_finding(
                "end of shoe", "medium", table, shoe, [coups_in_shoe],
                f"the shoe did not end as its rule ({rules[s].end_rule}) requires for a cut "
                f"card in front of card {cut[s] + 1}"))
        n_cards = max(int(6 * coups_in_shoe), 1)
        for column, (name, q) in enumerate((("suit", 0.25), ("ascending rank", 1 / 13))):
            run = int(runs[s, column])
            chance = n_cards * q ** (run - 1)
            if run >= 6 and chance < 1e-5:
                what = "of the same suit" if name == "suit" else "of ascending rank"
                found.append(_finding(
                    "ordered run", "high", table, shoe, [],
                    f"{run} cards in a row {what} — a run that long is expected about "
                    f"{chance:.1e} times in a shuffled shoe (cards in deck order?)"))
        out.append(((table, shoe), found, sketches[s]))
    return out


def _bottom(shoe: np.ndarray, hashes: np.ndarray, n: int) -> list[np.ndarray]:
    """Each shoe's :data:`SKETCH` smallest distinct sampled window hashes."""
    order = np.lexsort((hashes, shoe))
    shoe, hashes = shoe[order], hashes[order]
    bounds = np.searchsorted(shoe, np.arange(n + 1))
    return [np.unique(hashes[bounds[s]:bounds[s + 1]])[:SKETCH] for s in range(n)]


def _row_findings(cards: pl.DataFrame, p: np.ndarray, b: np.ndarray) -> list[dict[str, Any]]:
    n = cards.height
    values = {name: _POINTS[slots] for name, slots in (("p", p), ("b", b))}
    count = {name: (slots != NONE).sum(axis=1, dtype=np.int16) for name, slots in
             (("p", p), ("b", b))}
    kind = np.full(n, k.KIND_CARDS, dtype=np.int8)
    recorded = cards.select(
        pl.col("outcome").to_physical().cast(pl.Int16),
        *(pl.col(c).fill_null(-1).cast(pl.Int16) for c in ("player_total", "banker_total")),
        *(pl.col(c).cast(pl.Int16).fill_null(-1) for c in ("natural", "player_pair",
                                                           "banker_pair")))
    outcome, p_total, b_total, natural, p_pair, b_pair = (
        np.ascontiguousarray(recorded[c].to_numpy()) for c in recorded.columns)
    o1, o2, o3, o4, o5, o6 = (np.empty(n, dtype=np.int16) for _ in range(6))
    flags = np.empty(n, dtype=np.int32)
    reason = np.empty(n, dtype=np.int8)
    level = np.empty(n, dtype=np.int8)
    k.check_rows(values["p"], np.ascontiguousarray(p), count["p"], kind, values["b"],
                 np.ascontiguousarray(b), count["b"], kind, outcome, p_total, b_total, natural,
                 p_pair, b_pair, o1, o2, o3, o4, o5, o6, flags, reason, level)
    findings: list[dict[str, Any]] = []
    hit = np.flatnonzero(flags)
    if not len(hit):
        return findings
    rows = cards.select("table_id", "shoe_id", "coup")[hit].rows()
    grouped_hits: dict[tuple[str, str, str, str, str], list[int]] = {}
    for (table, shoe, coup), f in zip(rows, flags[hit].tolist(), strict=True):
        for bit, check, severity, text in _ROW_CHECKS:
            if f & (1 << bit):
                grouped_hits.setdefault((check, severity, table, shoe, text), []).append(coup)
    for (check, severity, table, shoe, text), coup_list in grouped_hits.items():
        findings.append(_finding(check, severity, table, shoe, coup_list,
                                 f"{text} in {len(coup_list)} coup(s)"))
    return findings


def _repeats(sketches: dict[tuple[str, str], np.ndarray],
             threshold: float) -> list[dict[str, Any]]:
    """Shoe pairs whose sketches share at least ``threshold`` of the smaller one: the same
    card sequence (a shoe dealt twice) or most of it (a pack not shuffled)."""
    ids = list(sketches)
    sizes = np.array([len(sketches[k]) for k in ids], dtype=np.int64)
    if not len(ids) or not sizes.sum():
        return []
    shoe = np.repeat(np.arange(len(ids)), sizes)
    h = np.concatenate([sketches[k] for k in ids])
    # Only hashes seen in two or more shoes take part in the pairing (in shuffled shoes,
    # almost none).
    order = np.argsort(h, kind="stable")
    h, shoe = h[order], shoe[order]
    repeated = np.zeros(len(h), dtype=np.bool_)
    repeated[1:] = h[1:] == h[:-1]
    repeated[:-1] |= repeated[1:].copy()
    shared = pl.DataFrame({"shoe": shoe[repeated], "h": h[repeated]})
    pairs = (shared.join(shared, on="h").filter(pl.col("shoe") < pl.col("shoe_right"))
             .group_by("shoe", "shoe_right").len().rename({"len": "shared"}))
    pairs = pairs.with_columns(
        pl.Series("windows", sizes[pairs["shoe"].to_numpy()]),
        pl.Series("windows_right", sizes[pairs["shoe_right"].to_numpy()]))
    pairs = pairs.with_columns(
        (pl.col("shared") / pl.min_horizontal("windows", "windows_right")).alias("share"))
    out = []
    for row in pairs.filter(pl.col("share") >= threshold).sort("shoe", "shoe_right"
                                                                 ).iter_rows(named=True):
        a, b = ids[row["shoe"]], ids[row["shoe_right"]]
        same = "the same card sequence" if row["share"] >= 0.999 else \
            f"{math.floor(row['share'] * 100)}% of the same card sequences"
        out.append(_finding(
            "repeated shoe", "high", a[0], a[1], [],
            f"shoe {a[1]} at table {a[0]} and shoe {b[1]} at table {b[0]} show {same} — "
            "a shoe dealt twice or not shuffled"))
    return out
