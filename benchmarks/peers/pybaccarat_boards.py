"""Runs inside the peer venv: full boards with pybaccarat's Scoreboard for every shoe.

Input: a file of outcome strings, one shoe per line. Output (stdout, JSON): coups/s and,
per shoe, the three derived-road strings (R/B) and the Banker ask, for checking.
pybaccarat's Game.play(display=False) crashes, so its Scoreboard is driven directly, as its
own Game.play does: Big Road type 0, derived roads 1-3 via get_cs_mark.
"""

import json
import sys
import time

from pybaccarat.baccarat import Scoreboard


def board(outcomes: str) -> tuple[list[str], str]:
    boards = [Scoreboard(0), Scoreboard(1), Scoreboard(2), Scoreboard(3)]
    for win in outcomes:
        if win == "T":
            continue
        boards[0].mark(win)
        for k in (1, 2, 3):
            mark = boards[k].get_cs_mark(boards[0].get_array())
            if mark != " ":
                boards[k].mark(mark)
    peek = boards[0].get_peek_B_array(boards[0].get_array())
    ask = "".join(boards[k].get_cs_mark(peek) for k in (1, 2, 3))
    roads = ["".join(("R" if col[0] == "s" else "B") * col[1] for col in b.get_array()[1:])
             for b in boards[1:]]
    return roads, ask


def main() -> None:
    with open(sys.argv[1]) as fh:
        shoes = fh.read().split()
    start = time.perf_counter()
    results = [board(s) for s in shoes]
    elapsed = time.perf_counter() - start
    coups = sum(len(s) for s in shoes)
    json.dump({"coups_per_second": coups / elapsed,
               "roads": [r for r, _ in results],
               "ask_banker": [a.replace("s", "R").replace("C", "B").replace(" ", "-")
                              for _, a in results]}, sys.stdout)


if __name__ == "__main__":
    main()
