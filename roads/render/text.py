"""A plain-text board for terminals (``roads board`` without ``--json``)."""

from __future__ import annotations

from roads.board import DERIVED, Board

ROWS = 6


def _grid(cells: list[tuple[int, int, str]], window: int | None) -> list[str]:
    last = max((c for c, _, _ in cells), default=-1)
    first = 0 if window is None else max(0, last - window + 1)
    width = max(last - first + 1, 1)
    rows = [["·"] * width for _ in range(ROWS)]
    for col, row, ch in cells:
        if col >= first:
            rows[row][col - first] = ch
    return ["".join(r) for r in rows]


def board_text(board: Board, window: int | None = None) -> str:
    """Big Road (B/P, ties as a digit on the cell when any) and the derived roads (R/B)."""
    lines = []
    big = [(c.col, c.row, c.outcome if not c.ties else (str(min(c.ties, 9))))
           for c in board.big_road]
    lines.append("Big Road (ties shown as their count on the cell)")
    lines += _grid(big, window)
    for road in DERIVED:
        lines.append(road.replace("_", " ").title())
        lines += _grid([(m.col, m.row, "R" if m.color == "red" else "B")
                        for m in board.marks(road)], window)
    counts = board.counts()
    lines.append(f"coups {counts['coups']}: Banker {counts['banker']}, Player {counts['player']}, "
                 f"Tie {counts['tie']}")
    for outcome in ("B", "P"):
        a = board.ask(outcome)
        marks = " ".join(f"{road}={a.colors[road] or '-'}" for road in DERIVED)
        lines.append(f"{outcome}? {marks}")
    return "\n".join(lines)
