"""Write the sample files of ``data/samples/`` (seeded: the same bytes every run).

    python data/samples/make.py [DIR]      # default: this file's directory

- ``cards.csv``: a card-level export of six shoes at two tables, as a table-game system
  writes it (one coup a line, cards as ``9h Kd``); the plain-CSV reader takes it whole.
- ``outcomes.txt``: three shoes as outcome lines (``BPPTB…``), the form of a pit
  clerk's scorecards; ingest names the shoes ``outcomes-1`` to ``outcomes-3``.
- ``unknown-headers.csv``: one card-level shoe whose card columns have headers ingest does
  not know (``Cards P``, ``Cards B``): ingest warns that it stores the shoe outcome-only
  and suggests ``--map``; ``--replace --map ...`` then adds the cards as amendments.
- ``dirty.csv``: one shoe as a Macau-style spreadsheet saves it: a BOM, semicolons,
  Chinese and Russian headers, outcome labels in four spellings, a column nothing reads
  (荷官, the dealer), four rows that are quarantined (an unreadable card, an unknown
  label, a hand for one side only, a row without its shoe) and one row whose recorded
  result contradicts its cards (stored as recorded, and flagged).

The shoes come from the engine (``roads.simulate``) with fixed seeds, so every coup in them
is a legal coup of an eight-deck shoe.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store

HERE = Path(__file__).resolve().parent


def _shoes(seed: int, shoes: int, tables: int) -> list[dict[str, Any]]:
    """The coups of a seeded simulation, in (table, shoe, coup) order."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.create(Path(tmp) / "store")
        write_simulation(Simulation(get_rules("standard-8"), shoes=shoes, seed=seed,
                                    tables=tables), store)
        rows: list[dict[str, Any]] = store.read.coups().to_dicts()
    return rows


def _hand(cards: list[str]) -> str:
    return " ".join(cards)


def cards_csv() -> str:
    lines = ["Table,Shoe,Hand No,Result,Player Cards,Banker Cards,Player Total,"
             "Banker Total,Time"]
    for r in _shoes(seed=2026, shoes=6, tables=2):
        table = r["table_id"].replace("SIM-", "BAC-")
        shoe = r["shoe_id"].replace("sim2026-0000", "0301-")
        lines.append(f"{table},{shoe},{r['coup']},{r['outcome']},{_hand(r['player_cards'])},"
                     f"{_hand(r['banker_cards'])},{r['player_total']},{r['banker_total']},"
                     f"{r['dealt_at'] + timedelta(days=59):%Y-%m-%dT%H:%M:%SZ}")
    return "\n".join(lines) + "\n"


def outcomes_txt() -> str:
    shoes: dict[str, list[str]] = {}
    for r in _shoes(seed=17, shoes=3, tables=1):
        shoes.setdefault(r["shoe_id"], []).append(r["outcome"])
    return "".join("".join(outcomes) + "\n" for outcomes in shoes.values())


#: Outcome labels as the dirty file writes them, rotating: Chinese (both scripts), Russian,
#: English words and letters.
_LABELS = {"B": ["庄", "莊", "Банк", "Banker", "B"], "P": ["闲", "閒", "Игрок", "player win", "P"],
           "T": ["和", "和局", "Ничья", "Tie", "T"]}


def dirty_csv() -> str:
    header = ["台号", "靴号", "局號", "Результат", "闲牌", "庄牌", "Время", "荷官"]
    rows = []
    for i, r in enumerate(_shoes(seed=88, shoes=1, tables=1)):
        label = _LABELS[r["outcome"]][i % 5]
        rows.append(["M-08", "2026-0302-A", str(r["coup"]), label, _hand(r["player_cards"]),
                     _hand(r["banker_cards"]),
                     f"{r['dealt_at'] + timedelta(days=60, hours=13):%Y-%m-%d %H:%M:%S}",
                     "陈" if r["coup"] < 40 else "Ли"])
    # The flagged row: coup 7's result written wrong (the cards say otherwise).
    seventh = rows[6]
    seventh[3] = "Ничья" if seventh[3] not in _LABELS["T"] else "庄"
    bad = [  # rows of the same shoe that cannot be stored, each after the coup it repeats
        (11, ["M-08", "2026-0302-A", "12", "闲", "9x Kd", "5s 2c", "2026-03-02 13:06:00", "陈"]),
        (21, ["M-08", "2026-0302-A", "22", "maybe", "", "", "2026-03-02 13:11:00", "陈"]),
        (31, ["M-08", "2026-0302-A", "32", "庄", "4h 3c", "", "2026-03-02 13:16:00", "陈"]),
        (41, ["M-08", "", "42", "闲", "", "", "2026-03-02 13:21:00", "Ли"]),
    ]
    for at, row in reversed(bad):
        rows.insert(at + 1, row)
    return "\ufeff" + "".join(";".join(r) + "\r\n" for r in [header, *rows])


def unknown_headers_csv() -> str:
    lines = ["Table,Shoe,Coup,Winner,Cards P,Cards B,Dealt"]
    for r in _shoes(seed=303, shoes=1, tables=1):
        lines.append(f"BAC-03,0302-001,{r['coup']},{r['outcome']},{_hand(r['player_cards'])},"
                     f"{_hand(r['banker_cards'])},"
                     f"{r['dealt_at'] + timedelta(days=60, hours=20):%Y-%m-%dT%H:%M:%SZ}")
    return "\n".join(lines) + "\n"


FILES = {"cards.csv": cards_csv, "outcomes.txt": outcomes_txt,
         "unknown-headers.csv": unknown_headers_csv, "dirty.csv": dirty_csv}


def main(out: Path = HERE) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, make in FILES.items():
        (out / name).write_bytes(make().encode("utf-8"))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
