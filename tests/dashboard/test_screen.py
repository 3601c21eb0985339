"""The table screen's content (pure) and its push channel (WebSocket, in process)."""

from __future__ import annotations

import json
import re

import pytest

from dashboard.config import SiteConfig, TableConfig
from dashboard.i18n import CATALOGS, LANGUAGES, labels
from dashboard.screen import card_html, screen_payload
from roads.tables import TableState, TableStatus
from tests.dashboard.conftest import Server

SITE = SiteConfig(casino="Casino <Test>", tables={
    "T1": TableConfig("T1", "Salon 1", min_bet=100, max_bet=10000, currency="EUR")})


def _coup(n: int, outcome: str, **extra: object) -> dict[str, object]:
    return {"coup": n, "outcome": outcome, "player_cards": None, "banker_cards": None,
            "player_total": None, "banker_total": None, "natural": None,
            "player_pair": None, "banker_pair": None, **extra}


def _open_state(outcomes: str, seq: int = 9) -> TableState:
    return TableState("T1", "open", seq, "S1", 3, "standard-8",
                      coups=[_coup(i + 1, o) for i, o in enumerate(outcomes)])


def test_every_catalog_has_every_key_and_differs_from_english() -> None:
    assert set(CATALOGS) == set(LANGUAGES)
    for code, catalog in CATALOGS.items():
        assert set(catalog) == set(CATALOGS["en"]), code
        if code != "en":
            for road in ("big_road", "big_eye_boy", "small_road", "cockroach_pig"):
                assert catalog[road] != CATALOGS["en"][road], (code, road)


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_screen_shows_the_roads_in_the_chosen_language(lang: str) -> None:
    payload = screen_payload(_open_state("BBPT"), SITE, lang, "dark")
    lab = labels(lang)
    for key in ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig",
                "banker", "player", "tie", "shoe", "coup", "limits"):
        assert lab[key] in payload["html"], (lang, key)
    assert payload["seq"] == 9 and payload["status"] == "open" and payload["coups"] == 4
    assert "EUR 100 – 10,000" in payload["html"]
    assert "Casino &lt;Test&gt;" in payload["html"]  # configuration text is escaped


def test_screen_carries_both_ask_overlays_and_the_ask_boxes() -> None:
    html = screen_payload(_open_state("BPBBP"), SITE, "en", "classic")["html"]
    assert html.count('<g class="ask-b">') == 4 and html.count('<g class="ask-p">') == 4
    assert 'class="ask-box ask-b"' in html and 'class="ask-box ask-p"' in html


def test_between_shoes_and_closed_show_a_clear_state_not_stale_roads() -> None:
    cases: list[tuple[TableStatus, str]] = [("between_shoes", "Shoe finished"),
                                            ("closed", "Table closed"), ("idle", "not open yet")]
    for status, text in cases:
        html = screen_payload(TableState("T1", status, 4, shoe_number=2), SITE, "en",
                              "dark")["html"]
        assert text in html and "<svg" not in html


def test_last_coup_shows_cards_and_totals() -> None:
    state = TableState("T1", "open", 3, "S1", 1, "standard-8", coups=[_coup(
        1, "P", player_cards=["9h", "Kd"], banker_cards=["2c", "3s", "Td"], player_total=9,
        banker_total=5)])
    html = screen_payload(state, SITE, "en", "dark")["html"]
    assert "Player wins" in html and card_html("9h") in html and "10♦" in html
    assert re.search(r'class="total">9<', html) and re.search(r'class="total">5<', html)


def _receive_state(ws: object) -> dict[str, object]:
    while True:
        message = json.loads(ws.receive_text())  # type: ignore[attr-defined]
        if message["type"] == "state":
            return message  # type: ignore[no-any-return]


def test_push_sends_the_full_state_on_connect_and_after_every_change(server: Server) -> None:
    auth = {"Authorization": f"Bearer {server.key}"}
    with server.client.websocket_connect("/ws/tables/T1?lang=el") as ws:
        first = _receive_state(ws)
        assert first["status"] == "idle"
        server.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"}, headers=auth)
        opened = _receive_state(ws)
        assert opened["status"] == "open" and opened["seq"] > first["seq"]  # type: ignore[operator]
        server.client.post("/api/tables/T1/coups", json={"outcome": "B"}, headers=auth)
        state = _receive_state(ws)
        assert state["coups"] == 1 and "Μεγάλος δρόμος" in str(state["html"])
    # A new connection (a reconnect) starts from the full current state.
    with server.client.websocket_connect("/ws/tables/T1") as ws:
        again = _receive_state(ws)
        assert again["coups"] == 1 and again["seq"] == state["seq"]


def test_ask_reaches_the_tables_screens(server: Server) -> None:
    csrf = server.login("dealer")
    with server.client.websocket_connect("/ws/tables/T1") as ws:
        _receive_state(ws)
        r = server.client.post("/operator/T1/action", json={"action": "ask", "outcome": "B"},
                               headers={"X-CSRF-Token": csrf})
        assert r.json()["message"] == "asked B? on 1 screens"
        message = json.loads(ws.receive_text())
        assert (message["type"], message["outcome"]) == ("ask", "B")
