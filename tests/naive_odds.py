"""A straightforward nested-loop enumeration of one coup, independent of roads.odds.

It walks every ordered sequence of point values card by card, multiplying the remaining
counts as it draws, and uses its own copy of the tableau transcribed from the printed table
in ``rules-el.txt``. Slow on purpose: it is the yardstick the fast engine is tested and
benchmarked against.
"""

from __future__ import annotations

# Banker's action by two-card total (rows 0..7) and the Player's third card (columns 0..9),
# copied from the S/D table of rules-el.txt.
EL_TABLE = {
    7: "SSSSSSSSSS",
    6: "SSSSSSDDSS",
    5: "SSSSDDDDSS",
    4: "SSDDDDDDSS",
    3: "DDDDDDDDSD",
    2: "DDDDDDDDDD",
    1: "DDDDDDDDDD",
    0: "DDDDDDDDDD",
}


def el_banker_draws(banker_total: int, player_third: int | None) -> bool:
    """The printed rules: Player stood -> Banker draws on 0-5; else the S/D table."""
    if player_third is None:
        return banker_total <= 5
    if banker_total >= 8:
        return False
    return EL_TABLE[banker_total][player_third] == "D"


def naive_ways(counts: list[int]) -> dict[str, int]:
    """Exact ways (ordered 6-card convention) by brute-force nested loops over values."""
    c = list(counts)
    n = sum(c)
    out = {"banker": 0, "player": 0, "tie": 0}

    def settle(weight: int, p: int, b: int, used: int) -> None:
        rest = 1
        for i in range(6 - used):
            rest *= n - used - i
        key = "banker" if b > p else "player" if p > b else "tie"
        out[key] += weight * rest

    for p1 in range(10):
        w1 = c[p1]
        if not w1:
            continue
        c[p1] -= 1
        for b1 in range(10):
            w2 = w1 * c[b1]
            if not w2:
                continue
            c[b1] -= 1
            for p2 in range(10):
                w3 = w2 * c[p2]
                if not w3:
                    continue
                c[p2] -= 1
                for b2 in range(10):
                    w4 = w3 * c[b2]
                    if not w4:
                        continue
                    c[b2] -= 1
                    pt, bt = (p1 + p2) % 10, (b1 + b2) % 10
                    if pt >= 8 or bt >= 8:
                        settle(w4, pt, bt, 4)
                    elif pt <= 5:
                        for p3 in range(10):
                            w5 = w4 * c[p3]
                            if not w5:
                                continue
                            c[p3] -= 1
                            pf = (pt + p3) % 10
                            if el_banker_draws(bt, p3):
                                for b3 in range(10):
                                    w6 = w5 * c[b3]
                                    if w6:
                                        settle(w6, pf, (bt + b3) % 10, 6)
                            else:
                                settle(w5, pf, bt, 5)
                            c[p3] += 1
                    elif el_banker_draws(bt, None):
                        for b3 in range(10):
                            w5 = w4 * c[b3]
                            if w5:
                                settle(w5, pt, (bt + b3) % 10, 5)
                    else:
                        settle(w4, pt, bt, 4)
                    c[b2] += 1
                c[p2] += 1
            c[b1] += 1
        c[p1] += 1
    out["total"] = out["banker"] + out["player"] + out["tie"]
    return out
