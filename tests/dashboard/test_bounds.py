"""One validator for every live source: each bound refused, in the same words, by the HTTP
API (422 naming the field) and by the operator screen (its message), and nothing stored."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.dashboard.conftest import Server

Post = Callable[[Server, dict[str, Any]], tuple[bool, str, str]]


def _api_coup(server: Server, body: dict[str, Any]) -> tuple[bool, str, str]:
    r = server.client.post("/api/tables/T1/coups", json=body,
                           headers={"Authorization": f"Bearer {server.key}"})
    if r.status_code in (200, 201):
        return True, "", ""
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    return False, str(detail["loc"][-1]), r.json()["error"]


def _api_shoe(server: Server, body: dict[str, Any]) -> tuple[bool, str, str]:
    r = server.client.post("/api/tables/T1/shoes", json=body,
                           headers={"Authorization": f"Bearer {server.key}"})
    if r.status_code == 201:
        return True, "", ""
    assert r.status_code == 422, r.text
    return False, str(r.json()["detail"][0]["loc"][-1]), r.json()["error"]


class Operator:
    """The operator screen's action route, as its page posts it."""

    def __init__(self, server: Server) -> None:
        self.server, self.csrf = server, server.login("dealer")

    def act(self, **data: Any) -> tuple[bool, str]:
        r = self.server.client.post("/operator/T1/action", json=data,
                                    headers={"X-CSRF-Token": self.csrf})
        assert r.status_code == 200, r.text
        body = r.json()
        return bool(body["ok"]), str(body.get("detail", ""))


def _cards(player: str, banker: str) -> dict[str, Any]:
    return {"player_cards": player.split(), "banker_cards": banker.split()}


def _open(server: Server) -> None:
    assert _api_shoe(server, {"shoe_id": "S1"})[0]


# -- ids ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("shoe_id", "words"), [
    ("x" * 65, "at most 64"), ("S/1", "pattern"), (" S1", "pattern"), ("S\u00001", "pattern"),
    ("*", "pattern"), ("", "at least 1")])
def test_shoe_ids_from_the_api(server: Server, shoe_id: str, words: str) -> None:
    ok, field, error = _api_shoe(server, {"shoe_id": shoe_id})
    assert not ok and field == "shoe_id" and words in error


@pytest.mark.parametrize(("shoe_id", "words"), [
    ("x" * 80, "ids have at most 64"), ("S/1", "may hold only letters"),
    ("S1\tX", "may hold only letters"), ("*", "may hold only letters")])
def test_shoe_ids_from_the_operator_screen(server: Server, shoe_id: str, words: str) -> None:
    ok, message = Operator(server).act(action="open_shoe", shoe_id=shoe_id)
    assert not ok and words in message
    assert server.ctx.service.table_state("T1").status == "idle"


def test_a_huge_shoe_id_is_refused_before_it_is_read(server: Server) -> None:
    csrf = server.login("dealer")
    r = server.client.post("/operator/T1/action", json={"action": "open_shoe",
                                                        "shoe_id": "x" * 100_000},
                           headers={"X-CSRF-Token": csrf})
    assert r.status_code == 413 and "at most" in r.json()["detail"]
    assert server.ctx.service.table_state("T1").status == "idle"


def test_the_system_table_cannot_be_used(server: Server) -> None:
    csrf = server.login("dealer")
    r = server.client.post("/operator/*/action", json={"action": "open_shoe",
                                                       "shoe_id": "S1"},
                           headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200 and not r.json()["ok"]
    assert "table_id" in r.json()["detail"]


# -- cards, tableau, totals, flags -----------------------------------------------------------
COUP_BOUNDS: list[tuple[dict[str, Any], str, str]] = [
    (_cards("9h", "5s 2c"), "player_cards", "at least 2"),
    (_cards("9h Kd 2c 3c", "5s 2c"), "player_cards", "at most 3"),
    (_cards("2h 3d", "Kc Qc"), "player_cards", "impossible coup"),
    (_cards("9h Kd 2c", "5s 2c"), "player_cards", "impossible coup"),
    ({**_cards("9h Kd", "5s 2c"), "outcome": "B"}, "outcome", "does not match the cards"),
    ({**_cards("9h Kd", "5s 2c"), "player_total": 8}, "player_total", "does not match"),
    ({**_cards("9h Kd", "5s 2c"), "natural": False}, "natural", "does not match"),
    ({**_cards("9h 9d", "5s 2c"), "player_pair": False}, "player_pair", "does not match"),
    ({"outcome": "B", "player_total": 9, "banker_total": 1}, "outcome", "contradicts the totals"),
    ({"outcome": "T", "player_total": 3, "banker_total": 3, "natural": True}, "natural",
     "natural contradicts the totals"),
    ({"outcome": "B", "banker_total": 10}, "banker_total", "less than or equal to 9"),
    ({"outcome": "X"}, "outcome", "'B', 'P' or 'T'"),
    ({"outcome": "B", "natural": "yes"}, "natural", "valid boolean"),
    ({"outcome": "B", "shoe_id": "S1", "coup": True}, "coup", "valid integer"),
    ({"outcome": "B", "shoe_id": "S1", "coup": 0}, "coup", "greater than or equal to 1"),
]


@pytest.mark.parametrize(("body", "field", "words"), COUP_BOUNDS)
def test_coup_bounds_from_the_api(server: Server, body: dict[str, Any], field: str,
                                  words: str) -> None:
    _open(server)
    ok, where, error = _api_coup(server, body)
    assert not ok and where == field and words in error, error
    assert server.ctx.service.table_state("T1").coups == []


OPERATOR_BOUNDS: list[tuple[dict[str, Any], str]] = [
    ({"player_cards": "9h", "banker_cards": "5s 2c"}, "each side needs two or three cards"),
    ({"player_cards": "9h Kd 2c 3c", "banker_cards": "5s 2c"},
     "each side needs two or three cards"),
    ({"player_cards": "2h 3d", "banker_cards": "Kc Qc"}, "impossible coup"),
    ({"player_cards": "9h Kd 2c", "banker_cards": "5s 2c"}, "impossible coup"),
    ({"player_cards": "9h Zz", "banker_cards": "5s 2c"}, "not a card"),
    ({"player_cards": "9h Kd"}, "give both player_cards and banker_cards"),
    ({"outcome": "X"}, "outcome"),
    ({"outcome": "B", "natural": "yes"}, "natural"),
    ({"outcome": "B", "player_pair": 1}, "player_pair"),
]


@pytest.mark.parametrize(("data", "words"), OPERATOR_BOUNDS)
def test_coup_bounds_from_the_operator_screen(server: Server, data: dict[str, Any],
                                              words: str) -> None:
    _open(server)
    ok, message = Operator(server).act(action="coup", **data)
    assert not ok and words in message, message
    assert server.ctx.service.table_state("T1").coups == []


def _deal(server: Server, hands: list[tuple[str, str]]) -> None:
    for player, banker in hands:
        ok, _, error = _api_coup(server, _cards(player, banker))
        assert ok, error


def test_the_shoes_inventory_from_both_sources(server: Server) -> None:
    """A one-deck shoe holds one ace of spades: the second is refused wherever it comes."""
    assert _api_shoe(server, {"shoe_id": "S1", "rules": "standard-8"})[0]
    server.ctx.service.close_shoe(*_key_actor(server))
    r = server.client.post("/api/tables/T1/shoes", json={"shoe_id": "S2", "burn_cards":
                                                         ["As", "Kd"]},
                           headers={"Authorization": f"Bearer {server.key}"})
    assert r.status_code == 201
    for _ in range(7):  # seven more aces of spades: eight in all, as eight decks hold
        _deal(server, [("As Kd", "5s 4c")])
    ok, field, error = _api_coup(server, _cards("As Kd", "5s 4c"))
    assert not ok and field == "player_cards" and "card As would be seen 9 times" in error
    ok, message = Operator(server).act(action="coup", player_cards="As Kd",
                                       banker_cards="5s 4c")
    assert not ok and "card As would be seen 9 times" in message


def _key_actor(server: Server) -> tuple[Any, str]:
    from roads.tables import Actor

    found = server.ctx.auth.key_table(server.key)
    assert found is not None
    return Actor.key(found[1], found[0]), "T1"


def test_no_shoe_holds_more_coups_than_its_decks_deal(server: Server) -> None:
    """104 coups is all an 8-deck shoe can deal (4 cards each): the 105th is refused."""
    _open(server)
    for _ in range(104):
        assert _api_coup(server, {"outcome": "B"})[0]
    ok, field, error = _api_coup(server, {"outcome": "P"})
    assert not ok and field == "coup" and "8 decks deal at most 104" in error
    ok, message = Operator(server).act(action="coup", outcome="P")
    assert not ok and "8 decks deal at most 104" in message
    assert len(server.ctx.service.table_state("T1").coups) == 104


@pytest.mark.parametrize("shift", [timedelta(days=-365 * 2000), timedelta(days=3),
                                   timedelta(minutes=-30), timedelta(days=-(365 * 57))])
def test_dealt_at_outside_the_shoes_journal_window(server: Server, shift: timedelta) -> None:
    _open(server)
    when = (datetime.now(UTC) + shift).isoformat()
    ok, field, error = _api_coup(server, {"outcome": "B", "dealt_at": when})
    assert not ok and field == "dealt_at", error
    assert "before the shoe was opened" in error or "in the future" in error
    assert _api_coup(server, {"outcome": "B", "dealt_at": datetime.now(UTC).isoformat()})[0]


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+01:00"])
def test_dealt_at_past_what_utc_holds_is_a_field_error(server: Server, when: str) -> None:
    """A time that is outside years 1-9999 once in UTC overflowed the conversion (a 500);
    now it is refused naming the field, and the table goes on."""
    _open(server)
    ok, field, error = _api_coup(server, {"outcome": "B", "dealt_at": when})
    assert not ok and field == "dealt_at" and "outside the years 1-9999 in UTC" in error
    assert _api_coup(server, {"outcome": "B"})[0]


def test_rule_sets_are_names_never_paths(server: Server, tmp_path: Any) -> None:
    (tmp_path / "club.toml").write_text('name = "club"\nbase = "standard-6"\n')
    for path in (str(tmp_path / "club.toml"), "/etc/x.toml", "../club.toml"):
        ok, field, error = _api_shoe(server, {"shoe_id": "S1", "rules": path})
        assert not ok and field == "rules" and ("pattern" in error or "at most 40" in error)
    ok, field, error = _api_shoe(server, {"shoe_id": "S1", "rules": "club.toml"})
    assert not ok and field == "rules" and "unknown rule set" in error
