"""The table-side screen's content: one HTML fragment per table state, language and theme.

Pure: a :class:`~roads.store.tables.TableState` in, a ``{"seq", "status", "html"}`` payload
out. The push channel sends the whole fragment every time, so a screen can never show half an
update, and a screen that reconnects is resynchronised by the first message it receives.
"""

from __future__ import annotations

from html import escape
from typing import Any

from dashboard.config import SiteConfig
from dashboard.i18n import labels
from roads.board import Board
from roads.render import scoreboard_svg
from roads.tables import TableState

#: Big Road columns a 16:9 screen shows (the derived roads show twice as many).
SCREEN_WINDOW = 26
_SUIT = {"s": ("♠", "black"), "c": ("♣", "black"), "h": ("♥", "red"), "d": ("♦", "red")}


def card_html(code: str) -> str:
    rank, (suit, colour) = code[0], _SUIT[code[1]]
    rank = "10" if rank == "T" else rank
    return f'<span class="card {colour}">{rank}{suit}</span>'


def _last_coup(coup: dict[str, Any] | None, lab: dict[str, str]) -> str:
    if coup is None:
        return ""
    outcome = {"B": lab["banker"], "P": lab["player"], "T": lab["tie"]}[coup["outcome"]]
    head = (f'<div class="last-outcome o-{coup["outcome"]}">{escape(outcome)}'
            f'{"" if coup["outcome"] == "T" else " " + escape(lab["wins"])}</div>')
    sides = []
    keyed = not coup.get("player_cards") and coup.get("player_total") is None
    for side, key in () if keyed else (("player", "P"), ("banker", "B")):
        cards = coup.get(f"{side}_cards")
        total = coup.get(f"{side}_total")
        hand = "".join(card_html(c) for c in cards) if cards else ""
        score = "" if total is None else f'<span class="total">{total}</span>'
        sides.append(f'<div class="hand h-{key}"><span class="side">{escape(lab[side])}</span>'
                     f'{hand}{score}</div>')
    return (f'<div class="last-coup"><h2>{escape(lab["last_coup"])} #{coup["coup"]}</h2>'
            f'{head}{"".join(sides)}</div>')


def _shares(board: Board, lab: dict[str, str]) -> str:
    c = board.counts()
    n = max(c["coups"], 1)
    rows = [("banker", c["banker"]), ("player", c["player"]), ("tie", c["tie"]),
            ("banker_pair", c["banker_pairs"]), ("player_pair", c["player_pairs"]),
            ("natural", c["naturals"])]
    cells = "".join(
        f'<tr class="s-{key}"><th>{escape(lab[key])}</th><td>{value}</td>'
        f'<td>{100 * value / n:.1f}%</td></tr>' for key, value in rows)
    return f'<table class="shares">{cells}</table>'


def screen_payload(state: TableState, site: SiteConfig, lang: str, theme: str) -> dict[str, Any]:
    """The screen's whole content for one state (``seq`` orders the updates)."""
    lab = labels(lang)
    table = site.table(state.table_id)
    rules = state.rules or table.rules
    limits = (f'<span>{escape(lab["limits"])}: {escape(table.limits())}</span>'
              if table.limits() else "")
    logo = '<img src="/brand/logo" alt="">' if site.logo else ""
    head = (f'<header><div class="brand">'
            f'{logo}'
            f'<span>{escape(site.casino)}</span></div>'
            f'<div class="ids"><span>{escape(lab["table"])} {escape(table.name)}</span>'
            f'<span>{escape(lab["shoe"])} #{state.shoe_number}</span>'
            f'<span class="coupno">{escape(lab["coup"])} {len(state.coups)}</span></div>'
            f'<div class="limits"><span>{escape(lab["rules"])}: {escape(rules)}</span>'
            f'{limits}'
            f'</div></header>')
    if state.status != "open":
        body = (f'<div class="status-screen"><div class="status-text">'
                f'{escape(lab["status_" + state.status])}</div></div>')
    else:
        board = Board.from_coups(state.coups)
        svg = scoreboard_svg(board, theme=theme, window=SCREEN_WINDOW, labels=lab, ask="both")
        body = (f'<main><section class="board">{svg}</section>'
                f'<aside>{_shares(board, lab)}'
                f'{_last_coup(state.coups[-1] if state.coups else None, lab)}'
                f'<p class="note">{escape(lab["information_only"])}</p></aside></main>')
    html = (f'<div class="screen status-{state.status}" data-seq="{state.seq}">'
            f'{head}{body}</div>')
    return {"type": "state", "table_id": state.table_id, "seq": state.seq,
            "status": state.status, "shoe_id": state.shoe_id, "coups": len(state.coups),
            "html": html}
