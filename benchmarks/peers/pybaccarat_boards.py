"""Runs inside the peer venv: full boards with pybaccarat's Scoreboard, one shoe at a time.

Usage: python pybaccarat_boards.py SHOES_FILE [RUNS]. SHOES_FILE holds one outcome string
per line. Output (stdout, JSON): the coups/s of every run and, per shoe, the three
derived-road strings (R/B) and the Banker ask of the last run, for checking.
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
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    coups = sum(len(s) for s in shoes)
    rates = []
    for _ in range(runs):
        start = time.perf_counter()
        results = [board(s) for s in shoes]
        rates.append(coups / (time.perf_counter() - start))
    json.dump({"coups_per_second": rates,
               "roads": [r for r, _ in results],
               "ask_banker": [a.replace("s", "R").replace("C", "B").replace(" ", "-")
                              for _, a in results]}, sys.stdout)


if __name__ == "__main__":
    main()
