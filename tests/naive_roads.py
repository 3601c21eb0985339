"""An independent, slow reference for the roads JSON contract, straight from ROADS.md.

Written apart from :mod:`roads.board` on purpose (plain lists, a set of taken cells, the ask
found by really appending the next coup) so the tests can hold the compiled path equal to
it. Where ROADS.md leaves a drawing detail open, the comment says which choice is made.
"""

from __future__ import annotations

from typing import Any

ROWS = 6
Coup = tuple[str, bool | None, bool | None, bool | None, int | None, int | None]
"""outcome, player_pair, banker_pair, natural, player_total, banker_total"""


def _draw(labels: list[str]) -> list[tuple[int, int]]:
    """Cells of a road drawn from its labels in order (Big Road, or red/blue marks).

    Same label: down one row while the cell is free and the streak has not turned; else
    right along the row (skipping a taken cell), and it stays on that row. New label: row 0
    right of where the previous streak started, skipping columns whose top cell is taken.
    """
    taken: set[tuple[int, int]] = set()
    cells: list[tuple[int, int]] = []
    start = col = row = -1
    turned = False
    previous: str | None = None
    for label in labels:
        if label == previous:
            if not turned and row + 1 < ROWS and (col, row + 1) not in taken:
                row += 1
            else:
                turned = True
                col += 1
                while (col, row) in taken:
                    col += 1
        else:
            col = start + 1
            while (col, 0) in taken:
                col += 1
            start, row, turned = col, 0, False
        taken.add((col, row))
        cells.append((col, row))
        previous = label
    return cells


def _winning_total(coup: Coup) -> int | None:
    outcome, _, _, _, player, banker = coup
    if outcome == "P":
        return player
    return banker if banker is not None else player


def _info(coup: Coup) -> dict[str, Any]:
    return {"player_pair": coup[1], "banker_pair": coup[2], "natural": coup[3],
            "total": _winning_total(coup)}


def _entries(coups: list[Coup], own_column: bool) -> tuple[list[dict[str, Any]], int]:
    """Big Road entries (outcome, coup, tie coups, logical column and depth) and the leading
    ties still waiting for a first cell."""
    entries: list[dict[str, Any]] = []
    waiting: list[int] = []
    for i, coup in enumerate(coups):
        outcome = coup[0]
        if outcome == "T":
            if entries:
                entries[-1]["tie_coups"].append(i)
            elif own_column:
                entries.append({"outcome": "T", "coup": i, "tie_coups": [i]})
            else:
                waiting.append(i)
            continue
        entries.append({"outcome": outcome, "coup": i, "tie_coups": waiting})
        waiting = []
    column = -1
    for n, entry in enumerate(entries):
        if n and entry["outcome"] == entries[n - 1]["outcome"]:
            entry["column"], entry["depth"] = column, entries[n - 1]["depth"] + 1
        else:
            column += 1
            entry["column"], entry["depth"] = column, 0
    return entries, len(waiting)


def _marks(entries: list[dict[str, Any]], k: int) -> list[tuple[int, str]]:
    """(entry index, colour) of derived road ``k``, from logical lengths only."""
    lengths: list[int] = []
    marks = []
    for n, entry in enumerate(entries):
        c, r = entry["column"], entry["depth"]
        if r == 0:
            lengths.append(1)
        else:
            lengths[c] += 1
        if entry["outcome"] == "T":
            continue
        if r == 0 and c >= k + 1:
            marks.append((n, "red" if lengths[c - 1] == lengths[c - 1 - k] else "blue"))
        elif r >= 1 and c >= k:
            marks.append((n, "blue" if lengths[c - k] == r else "red"))
    return marks


def contract(coups: list[Coup], leading_ties: str = "first-cell") -> dict[str, Any]:
    """The ``roads board --json`` document of a shoe."""
    roads = _roads(coups, leading_ties)
    asks = {}
    for name, outcome in (("banker", "B"), ("player", "P")):
        after = _roads([*coups, (outcome, None, None, None, None, None)], leading_ties)
        ask: dict[str, Any] = {}
        cells: dict[str, Any] = {"big_road": {k: after["big_road"][-1][k] for k in ("col", "row")}}
        for road in ("big_eye_boy", "small_road", "cockroach_pig"):
            grew = len(after[road]) > len(roads[road])
            ask[road] = after[road][-1]["color"] if grew else None
            cells[road] = {k: after[road][-1][k] for k in ("col", "row")} if grew else None
        asks[name] = {**ask, "cells": cells}
    roads["ask"] = asks
    tail = roads.pop("_tail")
    roads.update(tail)
    return roads


def _roads(coups: list[Coup], leading_ties: str) -> dict[str, Any]:
    entries, waiting = _entries(coups, leading_ties == "own-column")
    big_cells = _draw([e["outcome"] for e in entries])
    out: dict[str, Any] = {
        "leading_ties": leading_ties,
        "bead_plate": [{"col": i // ROWS, "row": i % ROWS, "outcome": c[0], "coup": i,
                        **_info(c)} for i, c in enumerate(coups)],
        "big_road": [{"col": cell[0], "row": cell[1], "outcome": e["outcome"],
                      "ties": len(e["tie_coups"]), "coup": e["coup"], "column": e["column"],
                      "depth": e["depth"], "tie_coups": e["tie_coups"],
                      **_info(coups[e["coup"]])}
                     for e, cell in zip(entries, big_cells, strict=True)],
    }
    for k, road in enumerate(("big_eye_boy", "small_road", "cockroach_pig"), start=1):
        marks = _marks(entries, k)
        cells = _draw([colour for _, colour in marks])
        out[road] = [{"col": cell[0], "row": cell[1], "color": colour,
                      "coup": entries[n]["coup"], "entry": n}
                     for (n, colour), cell in zip(marks, cells, strict=True)]
    lengths: dict[int, tuple[str, int]] = {}
    for e in entries:
        lengths[e["column"]] = (e["outcome"], e["depth"] + 1)
    out["_tail"] = {
        "pending_ties": waiting,
        "counts": {
            "coups": len(coups),
            "banker": sum(c[0] == "B" for c in coups),
            "player": sum(c[0] == "P" for c in coups),
            "tie": sum(c[0] == "T" for c in coups),
            "banker_pairs": sum(bool(c[2]) for c in coups),
            "player_pairs": sum(bool(c[1]) for c in coups),
            "naturals": sum(bool(c[3]) for c in coups),
        },
        "streaks": {
            "longest_banker_run": max((n for o, n in lengths.values() if o == "B"), default=0),
            "longest_player_run": max((n for o, n in lengths.values() if o == "P"), default=0),
            "columns": len(lengths),
            "dragon_tails": sum(n > ROWS for _, n in lengths.values()),
        },
    }
    return out


def outcome_coups(outcomes: str) -> list[Coup]:
    """Outcome-only coups (pairs, naturals and totals not recorded)."""
    return [(ch, None, None, None, None, None) for ch in outcomes]
