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
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np
import polars as pl

from roads import replay as k
from roads.cards import CARD_CODES, RANK_BURN
from roads.rules import RuleSet
from roads.schema import NO_CARD, conform, repeats_a_shoe
from roads.stats.columns import ShoeColumns, columns_of
from roads.stats.expect import shoe_rules

NONE = NO_CARD
_WINDOW = 8  # cards per fingerprint window
_SAMPLE = 8  # keep one window in _SAMPLE (chosen by content, so offsets do not matter)
_MASK48 = (1 << 6 * _WINDOW) - 1  # eight 6-bit card codes
#: Fingerprints kept per shoe for the repeated-shoe check: the smallest sampled window
#: fingerprints (a bottom-k sketch). Two copies of a shoe have the same sketch; unrelated
#: shoes share none.
SKETCH = 24
#: Point value of each card slot code (rank * 4 + suit); -1 for an empty slot.
_POINTS = np.full(256, -1, dtype=np.int16)
_POINTS[:52] = [(r + 1) if r < 9 else 0 for r in np.arange(52) // 4]


@nb.njit(cache=True, inline="always")
def _mix(w: np.uint64) -> np.uint64:
    """MurmurHash3's 64-bit finaliser: a bijection, so equal fingerprints are equal
    windows of eight cards (a window is packed into 48 bits first)."""
    w ^= w >> np.uint64(33)
    w *= np.uint64(0xFF51AFD7ED558CCD)
    w ^= w >> np.uint64(33)
    w *= np.uint64(0xC4CEB9FE1A85EC53)
    w ^= w >> np.uint64(33)
    return w


@nb.njit(cache=True, nogil=True)
def _shoe_pass(p: np.ndarray, b: np.ndarray, offsets: np.ndarray, decks: np.ndarray,
               burned: np.ndarray, cut: np.ndarray, last_coup_rule: np.ndarray,
               over: np.ndarray, runs: np.ndarray, end: np.ndarray,
               sketch: np.ndarray, sketch_size: np.ndarray) -> None:
    """Per shoe: inventory, longest suit / ascending-rank runs, end rule, and the sketch
    (its :data:`SKETCH` smallest distinct sampled window fingerprints, ascending)."""
    longest = 0  # buffers for the longest shoe, not the batch
    for s in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    seq = np.empty(6 * longest + 6, dtype=np.int8)
    sampled = np.empty(6 * longest + 6, dtype=np.uint64)
    starts = np.empty(longest + 1, dtype=np.int64)
    mask = np.uint64(_MASK48)
    counts = np.zeros(52, dtype=np.int64)
    for s in range(offsets.shape[0] - 1):
        counts[:] = 0
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
        # one loop over the cards: inventory, ordered runs, sampled window fingerprints
        best_suit = 1
        best_rank = 1
        run_suit = 1
        run_rank = 1
        window = np.uint64(0)
        previous = np.int64(0)
        k = 0  # sampled fingerprints, in card order (noted without a branch: 1 in 8)
        for t in range(m):
            card = np.int64(seq[t])  # 0..51: suit card & 3, rank card >> 2
            counts[card] += 1
            if t > 0:
                run_suit = run_suit + 1 if card & 3 == previous & 3 else 1
                run_rank = run_rank + 1 if card >> 2 == (previous >> 2) + 1 else 1
                best_suit = max(best_suit, run_suit)
                best_rank = max(best_rank, run_rank)
            previous = card
            window = ((window << np.uint64(6)) | np.uint64(card)) & mask
            h = _mix(window)
            sampled[k] = h
            k += (h % np.uint64(_SAMPLE) == 0) & (t >= _WINDOW - 1)
        n = 0  # fingerprints in the sketch so far
        for i in range(k):
            h = sampled[i]
            if n < SKETCH or h < sketch[s, n - 1]:
                # into the ascending sketch, which keeps the SKETCH smallest distinct
                j = n
                while j > 0 and sketch[s, j - 1] > h:
                    j -= 1
                if j == 0 or sketch[s, j - 1] != h:
                    for q in range(min(n, SKETCH - 1), j, -1):
                        sketch[s, q] = sketch[s, q - 1]
                    sketch[s, j] = h
                    n = min(n + 1, SKETCH)
        worst = 0
        for code in range(52):
            if counts[code] > decks[s] and counts[code] > counts[worst]:
                worst = code
        over[s, 0] = worst if counts[worst] > decks[s] else -1
        over[s, 1] = counts[worst]
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
        sketch_size[s] = n


@nb.njit(cache=True, nogil=True)
def _checks_pass(offsets: np.ndarray, outcome: np.ndarray, p_total: np.ndarray,
                 b_total: np.ndarray, natural: np.ndarray, p_pair: np.ndarray,
                 b_pair: np.ndarray, p: np.ndarray, b: np.ndarray, decks: np.ndarray,
                 burned: np.ndarray, cut: np.ndarray, end_rule: np.ndarray,
                 flags: np.ndarray, over: np.ndarray, runs: np.ndarray, end: np.ndarray,
                 sketch: np.ndarray, size: np.ndarray) -> None:
    """Card-level coups: the row replay (tableau, totals, outcome, flags) of every coup and
    the per-shoe checks (inventory, ordered runs, end rule, sketch)."""
    _shoe_pass(p, b, offsets, decks, burned, cut, end_rule, over, runs, end, sketch, size)
    for r in range(p.shape[0]):
        p_count = 0
        b_count = 0
        for j in range(3):
            p_count += p[r, j] != k.NONE
            b_count += b[r, j] != k.NONE
        flags[r] = k.judge_coup(
            _POINTS[p[r, 0]], _POINTS[p[r, 1]], _POINTS[p[r, 2]], p[r, 0], p[r, 1], p_count,
            k.KIND_CARDS, _POINTS[b[r, 0]], _POINTS[b[r, 1]], _POINTS[b[r, 2]], b[r, 0],
            b[r, 1], b_count, k.KIND_CARDS, outcome[r], p_total[r], b_total[r], natural[r],
            p_pair[r], b_pair[r])[6]


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


def _key_hash() -> pl.Expr:
    return pl.struct(pl.col("table_id", "shoe_id").cast(pl.String)).hash(seed=0)


def integrity_checks(coups: pl.DataFrame, shoes: pl.DataFrame,
                     repeat_threshold: float = 0.5) -> list[dict[str, Any]]:
    """Every finding on the card-level coups of a slice (outcome-only coups are skipped)."""
    scan = IntegrityScan(shoes, repeat_threshold)
    scan.add(coups)
    return scan.findings()


@dataclass(frozen=True)
class Checked:
    """One batch's checks: its shoes, their findings, their sketches."""

    keys: pl.DataFrame  # table_id, shoe_id of each shoe, in batch order
    findings: list[dict[str, Any]]
    sketch: np.ndarray  # (shoes, SKETCH) fingerprints, the first ``size`` of each held
    size: np.ndarray


class IntegrityScan:
    """The integrity checks over batches of whole shoes (a store's files one at a time).

    Memory holds one batch, the findings, each shoe's key, and the fixed-size
    :class:`WindowTable` of sketches for the repeated-shoe check: the state carried across
    batches does not grow with the coups. A shoe's checks need all of its coups in one
    batch: name the shoes cut across batches (``split``, e.g. a shoe imported in pieces) and
    add them once more, read whole, with ``whole=True``; other batches skip them."""

    def __init__(self, shoes: pl.DataFrame, repeat_threshold: float = 0.5,
                 split: frozenset[tuple[str, str]] = frozenset(),
                 bucket_bits: int = 20) -> None:
        known = conform(shoes, "shoes").select(
            "table_id", "shoe_id", "rules", "decks", "burn_cards", "coups", "cut_card_index")
        known = known.unique(["table_id", "shoe_id"]) if repeats_a_shoe(known) else known
        # sorted by a hash of the key, so a batch finds its shoes' rows by binary search
        # instead of a join that reads every shoe of the store
        hashed = known.with_columns(_key_hash().alias("_h")).sort("_h")
        self._hashes = hashed["_h"].to_numpy()
        self.shoes = hashed.drop("_h")
        self.threshold = repeat_threshold
        self.split = split
        self._found: list[dict[str, Any]] = []
        self._keys: list[pl.DataFrame] = []  # each batch's shoes, in ordinal order
        self._shoes_seen = 0
        self.windows = WindowTable(bucket_bits)

    def add(self, coups: pl.DataFrame, whole: bool = False) -> None:
        """Check a batch of whole shoes (``whole``: the :attr:`split` shoes, read whole)."""
        if self.split and not whole:
            cut = pl.DataFrame(sorted(self.split), schema=["table_id", "shoe_id"],
                               orient="row")
            coups = coups.join(cut, on=["table_id", "shoe_id"], how="anti")
        self.merge(self.check(columns_of(coups)))

    def check(self, cols: ShoeColumns) -> Checked | None:
        """The checks of one batch of whole shoes on their own (no state is touched, so
        batches can be checked side by side); :meth:`merge` adds the result. One compiled
        pass over the card-level coups: the ingest's rules on every coup
        (:func:`roads.replay.judge_coup`) and the per-shoe checks and sketch."""
        cards = cols.card_level()
        if not cards.rows:
            return None
        info = shoe_info(cards.keys, cards.offsets, self.rows_of(cards.keys))
        n = cards.shoes
        flags = np.zeros(cards.rows, dtype=np.int32)
        over = np.zeros((n, 2), dtype=np.int64)
        runs = np.zeros((n, 2), dtype=np.int64)
        end = np.zeros(n, dtype=np.int64)
        sketch = np.zeros((n, SKETCH), dtype=np.uint64)
        size = np.zeros(n, dtype=np.int64)
        _checks_pass(cards.offsets, cards.outcome, cards.player_total, cards.banker_total,
                     cards.natural, cards.player_pair, cards.banker_pair, cards.player,
                     cards.banker, info.decks, info.burned, info.cut, info.end_rule, flags,
                     over, runs, end, sketch, size)
        found = row_findings(flags, cards.keys, cards.offsets, cards.coup)
        found += shoe_findings(cards.keys, cards.offsets, info, over, runs, end)
        return Checked(cards.keys, found, sketch, size)

    def rows_of(self, keys: pl.DataFrame) -> pl.DataFrame:
        """The shoe rows of a batch's shoes (with any row whose key hash collides)."""
        wanted = keys.select(_key_hash()).to_series().to_numpy()
        low = np.searchsorted(self._hashes, wanted, side="left")
        high = np.searchsorted(self._hashes, wanted, side="right")
        if ((high - low) <= 1).all():  # no hash shared by two shoes: at most one row each
            return self.shoes[low[high > low]]
        rows = [np.arange(a, b) for a, b in zip(low.tolist(), high.tolist(), strict=True)]
        return self.shoes[np.unique(np.concatenate(rows))]

    def merge(self, checked: Checked | None) -> None:
        """Add one batch's :meth:`check` (batches in any order give the same findings)."""
        if checked is None:
            return
        self._found += checked.findings
        owners = np.repeat(np.arange(self._shoes_seen, self._shoes_seen + checked.keys.height,
                                     dtype=np.uint32), checked.size)
        held = np.arange(SKETCH)[None, :] < checked.size[:, None]
        self.windows.add(checked.sketch[held], owners)
        self._keys.append(checked.keys)
        self._shoes_seen += checked.keys.height

    def findings(self) -> list[dict[str, Any]]:
        """Every finding, shoe by shoe in key order, then the repeated shoes."""
        per_shoe = sorted(self._found, key=lambda f: (f["table_id"], f["shoe_id"]))
        if not self._keys:
            return per_shoe
        keys = pl.concat(self._keys)
        return per_shoe + _repeats(self.windows.shared(keys.height), keys, self.threshold)


_W = 8  # fingerprints per bucket of the window table


@nb.njit(cache=True, nogil=True)
def _insert(table: np.ndarray, owner: np.ndarray, fill: np.ndarray, bits: int,
            hashes: np.ndarray, owners: np.ndarray, status: np.ndarray) -> int:
    """Each fingerprint into its bucket (0: kept; 1: another shoe's copy of a kept one;
    2: not kept). A full bucket keeps its :data:`_W` smallest. Returns how many left."""
    shift = np.uint64(64 - bits)
    out = 0
    for i in range(hashes.shape[0]):
        h = hashes[i]
        base = np.int64(h >> shift) * _W
        n = np.int64(fill[base // _W])
        status[i] = 0
        hit = False
        for j in range(n):
            if table[base + j] == h:
                hit = True
                break
        if hit:
            status[i] = 1
            continue
        if n < _W:
            table[base + n] = h
            owner[base + n] = owners[i]
            fill[base // _W] = n + 1
            continue
        top = 0
        for j in range(1, _W):
            if table[base + j] > table[base + top]:
                top = j
        out += 1
        if h < table[base + top]:
            table[base + top] = h
            owner[base + top] = owners[i]
        else:
            status[i] = 2
    return out


@nb.njit(cache=True, nogil=True)
def _holder(table: np.ndarray, owner: np.ndarray, fill: np.ndarray, bits: int,
            hashes: np.ndarray) -> np.ndarray:
    """The shoe holding each fingerprint in the table (-1: not there)."""
    shift = np.uint64(64 - bits)
    out = np.full(hashes.shape[0], -1, dtype=np.int64)
    for i in range(hashes.shape[0]):
        base = np.int64(hashes[i] >> shift) * _W
        for j in range(np.int64(fill[base // _W])):
            if table[base + j] == hashes[i]:
                out[i] = owner[base + j]
                break
    return out


@nb.njit(cache=True, nogil=True)
def _kept(owner: np.ndarray, fill: np.ndarray, shoes: int) -> np.ndarray:
    """How many fingerprints of each shoe the table holds (as first holder)."""
    out = np.zeros(shoes, dtype=np.int64)
    for bucket in range(fill.shape[0]):
        for j in range(np.int64(fill[bucket])):
            out[owner[bucket * _W + j]] += 1
    return out


class WindowTable:
    """The cross-shoe state of the repeated-shoe check, of fixed size: ``2**bits`` buckets
    of :data:`_W` window fingerprints, each with the first shoe that showed it (12 bytes a
    slot: 2**21 buckets, 201 MB when full, pages touched only as filled).

    A fingerprint goes to the bucket its top bits name; a full bucket keeps its eight
    smallest fingerprints, so what is kept depends only on the fingerprints, never on the
    order shoes arrive. Later shoes showing a kept fingerprint are noted beside it (few:
    only repeats). Exact while no bucket overflows (:attr:`left_out` is 0; about 16 M
    sketched windows, some 700,000 shoes, before the first is likely): every shared
    window of every pair of shoes is found. Beyond, a repeat is judged on the windows the
    table kept, each still an exact match of eight cards."""

    def __init__(self, bits: int = 20) -> None:
        self.bits = bits
        self._table: np.ndarray | None = None
        self._owner = np.zeros(0, dtype=np.uint32)
        self._fill = np.zeros(0, dtype=np.uint8)
        self._extra_hash: list[np.ndarray] = []
        self._extra_owner: list[np.ndarray] = []
        self.left_out = 0

    def add(self, hashes: np.ndarray, owners: np.ndarray) -> None:
        if not len(hashes):
            return
        if self._table is None:  # zeroed pages cost no memory until written
            self._table = np.zeros(_W << self.bits, dtype=np.uint64)
            self._owner = np.zeros(_W << self.bits, dtype=np.uint32)
            self._fill = np.zeros(1 << self.bits, dtype=np.uint8)
        status = np.empty(len(hashes), dtype=np.int8)
        self.left_out += _insert(self._table, self._owner, self._fill, self.bits,
                                 np.ascontiguousarray(hashes, dtype=np.uint64),
                                 np.ascontiguousarray(owners, dtype=np.uint32), status)
        copy = status == 1
        if copy.any():
            self._extra_hash.append(hashes[copy])
            self._extra_owner.append(owners[copy])

    def shared(self, shoes: int) -> tuple[pl.DataFrame, np.ndarray]:
        """Every pair of shoes sharing kept fingerprints (``shoe`` < ``shoe_right``, with
        ``shared``), and how many of each shoe's fingerprints the table kept."""
        empty = pl.DataFrame(schema={"shoe": pl.Int64, "shoe_right": pl.Int64,
                                     "shared": pl.UInt32})
        if self._table is None:
            return empty, np.zeros(shoes, dtype=np.int64)
        kept = _kept(self._owner, self._fill, shoes)
        if not self._extra_hash:
            return empty, kept
        h = np.concatenate(self._extra_hash)
        first = _holder(self._table, self._owner, self._fill, self.bits, h)
        there = first >= 0  # a copy of a fingerprint later pushed out does not count
        h, later = h[there], np.concatenate(self._extra_owner)[there].astype(np.int64)
        kept += np.bincount(later, minlength=shoes)
        holders = pl.DataFrame({"h": np.concatenate([h, h]),
                                "shoe": np.concatenate([first[there], later])}).unique()
        pairs = (holders.join(holders, on="h").filter(pl.col("shoe") < pl.col("shoe_right"))
                 .group_by("shoe", "shoe_right").len().rename({"len": "shared"}))
        return pairs, kept


@dataclass(frozen=True)
class ShoeInfo:
    """What the per-shoe checks need of each shoe of a batch, from the shoes table."""

    rules: list[RuleSet]
    decks: np.ndarray  # int64
    burned: np.ndarray  # cards burned (0: none recorded)
    exposed: np.ndarray  # the exposed burn card's code, -1: no burn
    cut: np.ndarray  # the cut card's index in a complete shoe, else -1
    end_rule: np.ndarray  # 0 finish-plus-one, 1 last-coup, -1 not judged (no burn)


def shoe_info(keys: pl.DataFrame, offsets: np.ndarray, known: pl.DataFrame) -> ShoeInfo:
    """The shoes table's facts for a batch's shoes (``known``: their rows)."""
    info = keys.join(known, on=["table_id", "shoe_id"], how="left", maintain_order="left")
    named = {pair: shoe_rules(*pair) for pair in set(zip(
        info["rules"].to_list(), info["decks"].to_list(), strict=True))}
    rules = [named[pair] for pair in zip(info["rules"].to_list(), info["decks"].to_list(),
                                         strict=True)]
    burned = info["burn_cards"].list.len().fill_null(0).to_numpy().astype(np.int64)
    exposed = info["burn_cards"].list.first().to_physical().fill_null(-1).to_numpy() \
        .astype(np.int64)  # -1: no burn
    # The end rule can only be judged on a complete shoe (all its recorded coups present).
    complete = info["coups"].fill_null(-1).to_numpy() == np.diff(offsets)
    cut = np.where(complete, info["cut_card_index"].fill_null(-1).to_numpy(), -1) \
        .astype(np.int64)
    end_rule = np.where(exposed >= 0, np.array(
        [0 if r.end_rule == "finish-plus-one" else 1 for r in rules], dtype=np.int64), -1)
    return ShoeInfo(rules, np.array([r.decks for r in rules], dtype=np.int64), burned,
                    exposed, cut, end_rule)


def shoe_findings(keys: pl.DataFrame, offsets: np.ndarray, info: ShoeInfo, over: np.ndarray,
                  runs: np.ndarray, end: np.ndarray) -> list[dict[str, Any]]:
    """The findings of :func:`_shoe_pass`'s figures (Python only for the flagged shoes)."""
    decks, burned, exposed, cut, rules = (info.decks, info.burned, info.exposed, info.cut,
                                          info.rules)
    coups_in_shoe = np.diff(offsets)
    want = np.asarray(RANK_BURN, dtype=np.int64)[np.maximum(exposed, 0) // 4]
    bad_burn = (exposed >= 0) & (burned - 1 != want)
    n_cards = np.maximum(6 * coups_in_shoe, 1)
    chances = [n_cards * q ** (runs[:, column] - 1.0) for column, q in ((0, 0.25), (1, 1 / 13))]
    ordered = [(runs[:, column] >= 6) & (chances[column] < 1e-5) for column in (0, 1)]
    flagged = np.flatnonzero((over[:, 0] >= 0) | bad_burn | (end == 1) | ordered[0]
                             | ordered[1])
    found = []
    for s in flagged.tolist():
        table, shoe = keys.row(s)
        if over[s, 0] >= 0:
            found.append(_finding(
                "inventory", "high", table, shoe, [],
                f"card {CARD_CODES[over[s, 0]]} appears {over[s, 1]} times, but "
                f"{decks[s]} deck(s) hold only {decks[s]}"))
        if bad_burn[s]:
            found.append(_finding(
                "burn", "medium", table, shoe, [],
                f"the exposed {CARD_CODES[exposed[s]]} calls for {want[s]} burned card(s), "
                f"but {burned[s] - 1} were burned"))
        if end[s] == 1:
            found.append(_finding(
                "end of shoe", "medium", table, shoe, [int(coups_in_shoe[s])],
                f"the shoe did not end as its rule ({rules[s].end_rule}) requires for a cut "
                f"card in front of card {cut[s] + 1}"))
        for column, name in enumerate(("suit", "ascending rank")):
            if ordered[column][s]:
                what = "of the same suit" if name == "suit" else "of ascending rank"
                found.append(_finding(
                    "ordered run", "high", table, shoe, [],
                    f"{runs[s, column]} cards in a row {what} — a run that long is expected "
                    f"about {chances[column][s]:.1e} times in a shuffled shoe (cards in deck "
                    "order?)"))
    return found


def row_findings(flags: np.ndarray, keys: pl.DataFrame, offsets: np.ndarray,
                 coup: np.ndarray) -> list[dict[str, Any]]:
    """The findings of the row replay's ``flags``, one per check and shoe, coups in row
    order (rows named by their shoe's key and their coup number)."""
    findings: list[dict[str, Any]] = []
    hit = np.flatnonzero(flags)
    if not len(hit):
        return findings
    owner = np.searchsorted(offsets, hit, side="right") - 1
    rows = [(*keys.row(s), c) for s, c in zip(owner.tolist(), coup[hit].tolist(),
                                              strict=True)]
    grouped_hits: dict[tuple[str, str, str, str, str], list[int]] = {}
    for (table, shoe, number), f in zip(rows, flags[hit].tolist(), strict=True):
        for bit, check, severity, text in _ROW_CHECKS:
            if f & (1 << bit):
                grouped_hits.setdefault((check, severity, table, shoe, text), []).append(number)
    for (check, severity, table, shoe, text), coup_list in grouped_hits.items():
        findings.append(_finding(check, severity, table, shoe, coup_list,
                                 f"{text} in {len(coup_list)} coup(s)"))
    return findings


def _repeats(shared: tuple[pl.DataFrame, np.ndarray], keys: pl.DataFrame,
             threshold: float) -> list[dict[str, Any]]:
    """Shoe pairs sharing at least ``threshold`` of the smaller one's sketch: the same card
    sequence (a shoe dealt twice) or most of it (a pack not shuffled); in key order."""
    pairs, sizes = shared
    if pairs.is_empty():
        return []
    pairs = pairs.with_columns(
        pl.Series("windows", sizes[pairs["shoe"].to_numpy()]),
        pl.Series("windows_right", sizes[pairs["shoe_right"].to_numpy()]))
    pairs = pairs.with_columns(
        (pl.col("shared") / pl.min_horizontal("windows", "windows_right")).alias("share"))
    out = []
    for a_i, b_i, share in pairs.filter(pl.col("share") >= threshold).select(
            "shoe", "shoe_right", "share").iter_rows():
        # only the repeated shoes' keys as Python values (not every shoe of the store)
        a, b = sorted((keys.row(a_i), keys.row(b_i)))
        same = "the same card sequence" if share >= 0.999 else \
            f"{math.floor(share * 100)}% of the same card sequences"
        out.append(((a, b), _finding(
            "repeated shoe", "high", a[0], a[1], [],
            f"shoe {a[1]} at table {a[0]} and shoe {b[1]} at table {b[0]} show {same} — "
            "a shoe dealt twice or not shuffled")))
    return [f for _, f in sorted(out, key=lambda x: x[0])]
