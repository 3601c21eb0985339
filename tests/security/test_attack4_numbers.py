"""Numbers and days at the edge of what their types hold are answered in words, not with a
500 (the attack session of 2 Dec 2026): request and coup numbers no database integer holds,
the first and last days a date can name."""

from __future__ import annotations

import pytest

from tests.security.conftest import Site


@pytest.mark.parametrize("number", ["9" * 30, str(2**63), "0"])
def test_a_request_number_no_journal_holds_is_a_422_naming_it(site: Site, number: str) -> None:
    token = site.ctx.auth.issue_token("super")
    answer = site.client.post(f"/api/corrections/{number}", json={"decision": "approve"},
                              headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["path", "request"]


@pytest.mark.parametrize(("action", "field"), [
    ({"action": "approve", "request": "9" * 30}, "request"),
    ({"action": "request_correction", "coup": "9" * 30, "shoe_id": "S1", "reason": "x"},
     "coup"),
])
def test_operator_numbers_no_journal_holds_are_named(site: Site, action: dict[str, str],
                                                     field: str) -> None:
    csrf = site.login("super")
    answer = site.client.post("/operator/T1/action", json=action,
                              headers={"x-csrf-token": csrf})
    assert answer.status_code == 200
    assert answer.json()["ok"] is False
    assert answer.json()["field"] == field


def test_the_first_and_last_days_a_date_can_name_are_answered(site: Site) -> None:
    for query in ("from=0001-01-01&to=9999-12-31", "to=9999-12-31", "from=0001-01-01"):
        assert site.client.get(f"/history?{query}").status_code == 200, query
    site.login("auditor")
    assert site.client.get("/audit?from=0001-01-01&to=9999-12-31").status_code == 200
