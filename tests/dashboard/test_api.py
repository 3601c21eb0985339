"""The HTTP API: reads, keyed writes, and every error path."""

from __future__ import annotations

from typing import Any

from roads.board import Board
from roads.store import Selection
from tests.dashboard.conftest import Server
from tests.hung_writer import hung_from_seal, hung_writer


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _open(server: Server, shoe: str = "S1") -> None:
    r = server.client.post("/api/tables/T1/shoes", json={"shoe_id": shoe},
                           headers=_auth(server.key))
    assert r.status_code == 201, r.text


def test_tables_lists_configured_and_journaled_tables(server: Server) -> None:
    key_event = server.ctx.service.journal.table_head("T1")  # issuing T1's key is journaled
    assert key_event > 0
    assert server.client.get("/api/tables").json() == [
        {"table_id": "T1", "state": "idle", "shoe_id": None, "shoe_number": 0, "coups": 0,
         "rules": None, "last_outcome": None, "seq": key_event}]
    _open(server)
    for outcome in "BPB":
        r = server.client.post("/api/tables/T1/coups", json={"outcome": outcome},
                               headers=_auth(server.key))
        assert r.status_code == 201 and r.json()["created"] is True
    [t1] = server.client.get("/api/tables").json()
    assert (t1["state"], t1["shoe_id"], t1["coups"], t1["last_outcome"]) == ("open", "S1", 3, "B")


def test_board_is_the_roads_contract_of_the_current_shoe(server: Server) -> None:
    _open(server)
    for outcome in "BBPTPBB":
        server.client.post("/api/tables/T1/coups", json={"outcome": outcome},
                           headers=_auth(server.key))
    body = server.client.get("/api/tables/T1/board").json()
    expected = Board.from_outcomes("BBPTPBB").to_dict()
    # Keypad coups carry no pair/natural information: compare the road positions.
    for road in ("big_road", "big_eye_boy", "small_road", "cockroach_pig"):
        assert [(c["col"], c["row"]) for c in body["board"][road]] == \
            [(c["col"], c["row"]) for c in expected[road]]
    assert body["board"]["ask"] == expected["ask"]
    assert body["state"] == "open" and body["shoe_id"] == "S1"


def test_card_level_coup_is_replayed_and_stats_carry_live_odds(server: Server) -> None:
    _open(server)
    r = server.client.post("/api/tables/T1/coups", json={
        "player_cards": ["9h", "Kd"], "banker_cards": ["2c", "3c"]}, headers=_auth(server.key))
    assert r.status_code == 201 and r.json()["outcome"] == "P"
    stats = server.client.get("/api/tables/T1/stats").json()
    assert stats["statistics"]["coups"] == 1
    left = stats["live_odds"]["composition"]
    assert (left["9"], left["K"], left["2"], left["3"]) == (31, 31, 31, 31)
    assert stats["live_odds"]["cards_left"] == 416 - 4


def test_duplicate_post_is_idempotent_and_a_different_coup_conflicts(server: Server) -> None:
    _open(server)
    coup: dict[str, Any] = {"shoe_id": "S1", "coup": 1, "outcome": "B"}
    first = server.client.post("/api/tables/T1/coups", json=coup, headers=_auth(server.key))
    again = server.client.post("/api/tables/T1/coups", json=coup, headers=_auth(server.key))
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["created"] is False and again.json()["seq"] == first.json()["seq"]
    clash = server.client.post("/api/tables/T1/coups", json={**coup, "outcome": "P"},
                               headers=_auth(server.key))
    assert clash.status_code == 409 and "different content" in clash.json()["detail"]
    skip = server.client.post("/api/tables/T1/coups", json={**coup, "coup": 3},
                              headers=_auth(server.key))
    assert skip.status_code == 409 and "next coup of shoe S1 is 2" in skip.json()["detail"]
    assert server.client.get("/api/tables").json()[0]["coups"] == 1


def test_missing_unknown_and_foreign_keys_are_refused(server: Server) -> None:
    body = {"outcome": "B"}
    before = server.ctx.service.journal.table_head("T1")
    none = server.client.post("/api/tables/T1/coups", json=body)
    assert none.status_code == 401 and none.headers["www-authenticate"] == "Bearer"
    wrong = server.client.post("/api/tables/T1/coups", json=body, headers=_auth("rk_x_y"))
    assert wrong.status_code == 401
    basic = server.client.post("/api/tables/T1/coups", json=body,
                               headers={"Authorization": f"Basic {server.key}"})
    assert basic.status_code == 401
    other = server.ctx.auth.issue_key("T2")
    foreign = server.client.post("/api/tables/T1/coups", json=body, headers=_auth(other))
    assert foreign.status_code == 403 and "T2" in foreign.json()["detail"]
    assert server.ctx.service.journal.table_head("T1") == before  # nothing was written


def test_invalid_payloads_get_422_naming_the_field(server: Server) -> None:
    _open(server)
    cases = [
        ({"outcome": "X"}, "outcome"),
        ({"outcome": "B", "player_total": 10}, "player_total"),
        ({"player_cards": ["9h", "Zz"], "banker_cards": ["2c", "3c"]}, "player_cards"),
        ({"player_cards": ["9h"], "banker_cards": ["2c", "3c"]}, "player_cards"),
        ({"player_cards": ["9h", "Kd"]}, "banker_cards"),
        ({}, "outcome"),
        ({"outcome": "B", "colour": "red"}, "colour"),
        ({"outcome": "B", "shoe_id": "S1"}, "coup"),
        ({"outcome": "B", "dealt_at": "yesterday"}, "dealt_at"),
    ]
    for payload, field in cases:
        r = server.client.post("/api/tables/T1/coups", json=payload, headers=_auth(server.key))
        assert r.status_code == 422, payload
        assert field in r.json()["error"], (payload, r.json())
    bad_json = server.client.post("/api/tables/T1/coups", content=b"{not json",
                                  headers={**_auth(server.key),
                                           "content-type": "application/json"})
    assert bad_json.status_code == 422


def test_impossible_coups_and_table_states_are_409(server: Server) -> None:
    no_shoe = server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                                 headers=_auth(server.key))
    assert no_shoe.status_code == 409 and "no open shoe" in no_shoe.json()["detail"]
    _open(server)
    twice = server.client.post("/api/tables/T1/shoes", json={"shoe_id": "S2"},
                               headers=_auth(server.key))
    assert twice.status_code == 409 and "already has shoe S1 open" in twice.json()["detail"]
    # Player 0-0 stands on... no: Player 2+3=5 draws; giving two cards is impossible.
    stand = server.client.post("/api/tables/T1/coups", json={
        "player_cards": ["2h", "3d"], "banker_cards": ["Kc", "Qc"]}, headers=_auth(server.key))
    assert stand.status_code == 422 and "impossible coup" in stand.json()["error"]
    assert stand.json()["detail"][0]["loc"] == ["body", "player_cards"]
    lie = server.client.post("/api/tables/T1/coups", json={
        "player_cards": ["9h", "Kd"], "banker_cards": ["2c", "3c"], "outcome": "B"},
        headers=_auth(server.key))
    assert lie.status_code == 422 and "does not match the cards" in lie.json()["error"]
    assert lie.json()["detail"][0]["loc"] == ["body", "outcome"]
    unknown_rules = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert unknown_rules.status_code == 200
    bad = server.client.post("/api/tables/T1/shoes", json={"shoe_id": "S9", "rules": "nope"},
                             headers=_auth(server.key))
    assert bad.status_code == 422 and "unknown rule set" in bad.json()["error"]
    assert bad.json()["detail"][0]["loc"] == ["body", "rules"]


def test_closing_a_shoe_seals_it_and_the_screen_state_says_so(server: Server) -> None:
    _open(server)
    server.client.post("/api/tables/T1/coups", json={"outcome": "T"}, headers=_auth(server.key))
    r = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert r.status_code == 200
    assert server.client.get("/api/tables").json()[0]["state"] == "between_shoes"
    stored = server.ctx.service.store.read.coups(Selection("T1", "S1"))
    assert stored["outcome"].cast(str).to_list() == ["T"]
    board = server.client.get("/api/tables/T1/board").json()
    assert board["board"] is None and board["state"] == "between_shoes"


def test_unknown_table_is_404_and_health_and_openapi_are_served(server: Server) -> None:
    assert server.client.get("/api/tables/NOPE/board").status_code == 404
    assert server.client.get("/api/tables/NOPE/stats").status_code == 404
    health = server.client.get("/health").json()
    assert health["status"] == "ok" and health["journal_seq"] > 0  # users were journaled
    schema = server.client.get("/openapi.json").json()
    assert {"/api/tables", "/api/tables/{table_id}/board", "/api/tables/{table_id}/stats",
            "/api/tables/{table_id}/coups"} <= set(schema["paths"])
    assert "CoupIn" in schema["components"]["schemas"]


def test_a_write_behind_a_hung_writer_is_a_503_with_retry_after(server: Server) -> None:
    _open(server)
    journal = server.ctx.service.journal
    journal.queue_wait = 0.3
    with hung_writer(journal.path):
        r = server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                               headers=_auth(server.key))
        assert r.status_code == 503, r.text
        assert int(r.headers["Retry-After"]) >= 1 and "busy" in r.json()["detail"]
    r = server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                           headers=_auth(server.key))
    assert r.status_code == 201 and r.json()["coup"] == 1  # the refused coup left nothing


def test_closing_again_after_a_503_seal_completes_the_close(server: Server) -> None:
    _open(server)
    r = server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                           headers=_auth(server.key))
    assert r.status_code == 201
    server.ctx.service.journal.queue_wait = 0.3
    with hung_from_seal(server.ctx.service.store):  # the close commits, its seal waits
        r = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
        assert r.status_code == 503, r.text
        assert int(r.headers["Retry-After"]) >= 1 and "try again" in r.json()["detail"]
    server.ctx.service.journal.queue_wait = 5  # (the helper that gave up may be slow to go)
    r = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert r.status_code == 200, r.text  # the retry the 503 asked for
    body = r.json()
    assert body["shoe_id"] == "S1" and body["sealed_seq"] > body["seq"]
    assert server.ctx.service.store.unsealed_closed() == []
    stored = server.ctx.service.store.read.coups(Selection("T1", "S1"))
    assert stored["outcome"].cast(str).to_list() == ["B"]
    again = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert again.status_code == 409 and "no open shoe" in again.json()["detail"]


def test_a_seal_with_a_key_not_the_store_s_is_a_500_naming_the_key(server: Server) -> None:
    from tests.store.test_signing_key import replace_private_key

    _open(server)
    r = server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                           headers=_auth(server.key))
    assert r.status_code == 201
    replace_private_key(server.ctx.service.store.root)
    r = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert r.status_code == 500, r.text
    assert "keys/store-ed25519.pem" in r.json()["detail"]
    assert str(server.ctx.service.store.root) not in r.json()["detail"]  # no server path
    assert server.ctx.service.store.unsealed_closed() == [("T1", "S1")]  # nothing sealed
