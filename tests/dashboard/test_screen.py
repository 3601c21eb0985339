"""The table screen's content (pure) and its push channel (WebSocket, in process)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from dashboard.config import SiteConfig, TableConfig
from dashboard.i18n import CATALOGS, LANGUAGES, labels
from dashboard.screen import card_html, screen_payload, theme_style
from roads.render import THEMES
from roads.tables import TableState, TableStatus
from tests.dashboard.conftest import Server
from tests.dashboard.screen_dom import ScreenPage, page_of

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


def _receive(ws: object, kinds: tuple[str, ...] = ("state", "update")) -> dict[str, object]:
    while True:
        message = json.loads(ws.receive_text())  # type: ignore[attr-defined]
        if message["type"] in kinds:
            return message  # type: ignore[no-any-return]


def test_push_sends_the_full_state_on_connect_then_updates(server: Server) -> None:
    auth = {"Authorization": f"Bearer {server.key}"}
    page = ScreenPage()
    with server.client.websocket_connect("/ws/tables/T1?lang=el") as ws:
        first = _receive(ws)
        assert first["type"] == "state" and first["status"] == "idle"
        server.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"}, headers=auth)
        opened = _receive(ws)
        assert opened["type"] == "state"  # a new shoe: the whole screen
        assert opened["status"] == "open" and opened["seq"] > first["seq"]  # type: ignore[operator]
        assert page.receive(opened) and "Μεγάλος δρόμος" in str(opened["html"])
        server.client.post("/api/tables/T1/coups", json={"outcome": "B"}, headers=auth)
        update = _receive(ws)
        assert (update["type"], update["coups"], update["base"]) == ("update", 1, opened["seq"])
        assert page.receive(update)
    # A new connection (a reconnect) starts from the full current state: the same page.
    with server.client.websocket_connect("/ws/tables/T1?lang=el") as ws:
        again = _receive(ws)
        assert again["type"] == "state" and again["seq"] == update["seq"]
        assert page_of(str(again["html"])) == page.tree()


def test_ask_reaches_the_tables_screens(server: Server) -> None:
    csrf = server.login("dealer")
    with server.client.websocket_connect("/ws/tables/T1") as ws:
        _receive(ws)
        r = server.client.post("/operator/T1/action", json={"action": "ask", "outcome": "B"},
                               headers={"X-CSRF-Token": csrf})
        assert r.json()["message"] == "Asked B? on 1 screen"
        message = json.loads(ws.receive_text())
        assert (message["type"], message["outcome"]) == ("ask", "B")


def test_chinese_road_names_are_the_ones_printed_on_boards() -> None:
    roads = ("big_road", "big_eye_boy", "small_road", "cockroach_pig", "bead_plate")
    assert [CATALOGS["zh-Hans"][r] for r in roads] == ["大路", "大眼仔", "小路", "曱甴路", "珠盘路"]
    assert [CATALOGS["zh-Hant"][r] for r in roads] == ["大路", "大眼仔", "小路", "曱甴路", "珠盤路"]


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_whole_screen_takes_its_colours_from_the_theme(theme: str) -> None:
    html = screen_payload(_open_state("BPPBT"), SITE, "en", theme)["html"]
    t = THEMES[theme]
    style = re.search(r'class="screen [^"]*" data-seq="9" style="([^"]*)"', html)
    assert style is not None
    assert style.group(1) == theme_style(theme)
    for colour in (t.banker, t.player, t.tie, t.natural, t.text, t.panel, t.background):
        assert colour in style.group(1)
    # The counts' keys are the roads' marks: shapes too in the colour-blind theme.
    counts = html[html.index('<table class="shares">'):html.index("</table>")]
    assert ("<rect" in counts) == t.shapes  # Player's key is a square only there
    assert (t.player in counts) and (t.banker in counts)


def test_each_road_is_its_own_svg_fitted_by_the_page() -> None:
    html = screen_payload(_open_state("BPPBTBBP"), SITE, "en", "dark")["html"]
    roads = re.findall(r'<section class="road r-(\w+)"><h2>([^<]+)</h2><div class="cells">'
                       r'<svg [^>]*class="road-svg"', html)
    assert roads == [("big_road", "Big Road"), ("big_eye_boy", "Big Eye Boy"),
                     ("small_road", "Small Road"), ("cockroach_pig", "Cockroach Pig"),
                     ("bead_plate", "Bead Plate")]
    assert re.findall(r'<span class="ask-label">([^<]+)</span>', html) == [
        "Banker ask", "Player ask"]


@dataclass(frozen=True)
class _ContractState:
    """Only the fields of the screen's contract (what the live-table service provides)."""

    table_id: str
    status: str
    seq: int
    shoe_id: str | None
    shoe_number: int
    rules: str | None
    coups: list[dict[str, object]]


def test_the_screen_needs_only_the_contract_fields() -> None:
    state = _ContractState("T1", "open", 12, "S9", 4, "ez-8", [_coup(1, "B"), _coup(2, "T")])
    payload = screen_payload(state, SITE, "en", "classic")
    assert {k: payload[k] for k in ("type", "table_id", "seq", "status", "shoe_id", "coups")} \
        == {"type": "state", "table_id": "T1", "seq": 12, "status": "open", "shoe_id": "S9",
            "coups": 2}
    assert "Rules: ez-8" in payload["html"] and "Shoe #4" in payload["html"]
