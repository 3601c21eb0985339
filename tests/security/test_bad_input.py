"""Attack: make the server answer 500 (and log a traceback) with input it should refuse.

Reproduced in issue 16: malformed or non-UTF-8 bodies to the operator action and the login,
bad values to Dash callbacks and unknown component-suite paths all gave 500s.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.security.conftest import Site


@pytest.mark.parametrize(("body", "detail"), [
    (b"{not json", "the action is not valid JSON"),
    (b"\xff\xfe{}", "the action is not UTF-8 text"),
    (b"[1, 2]", "the action must be a JSON object"),
    (b"[" * 3000 + b"]" * 3000, "the action is not valid JSON"),  # nested past recursion
    (b"", "the action is not valid JSON"),
])
def test_a_malformed_operator_action_is_a_400(site: Site, body: bytes, detail: str) -> None:
    csrf = site.login("dealer")
    r = site.client.post("/operator/T1/action", content=body,
                         headers={"X-CSRF-Token": csrf, "content-type": "application/json"})
    assert (r.status_code, r.json()["detail"]) == (400, detail)


def test_an_operator_action_with_wrong_types_is_answered_in_words(site: Site) -> None:
    csrf = site.login("dealer")
    act: dict[str, Any] = {"headers": {"X-CSRF-Token": csrf}}
    site.client.post("/operator/T1/action", json={"action": "open_shoe", "shoe_id": "S1"}, **act)
    r = site.client.post("/operator/T1/action", json={"action": "request_correction",
                                                      "shoe_id": "S1", "coup": "two"}, **act)
    assert r.status_code == 200 and r.json()["ok"] is False and "two" in r.json()["detail"]
    r = site.client.post("/operator/T1/action", json={"action": ["coup"]}, **act)
    assert r.status_code == 422 and "unknown action" in r.json()["detail"]


def _update(output: str, outputs: Any, inputs: list[dict[str, Any]],
            state: list[dict[str, Any]] | None = None) -> bytes:
    return json.dumps({"output": output, "outputs": outputs, "inputs": inputs,
                       "state": state or [], "changedPropIds": []}).encode()


TABLE = ("..table-body.children...table-seq.data..",
         [{"id": "table-body", "property": "children"}, {"id": "table-seq", "property": "data"}])


@pytest.mark.parametrize(("body", "detail"), [
    (b"not json", "the update request is not valid JSON"),
    (b"\xff\xfe", "the update request is not UTF-8 text"),
    (b"[]", "the update request must be a JSON object"),
    (b'{"output": 3}', "the update request: field output must be a string"),
    (b'{"output": "x"}', "the update request: missing field outputs"),
    (_update("nope.children", {"id": "nope", "property": "children"}, []),
     "the update request names no callback of this page: 'nope.children'"),
    (_update(*TABLE, [{"id": "table-tick", "property": "n_intervals", "value": 1}],
             [{"id": "table-id", "property": "data", "value": {"a": 1}},
              {"id": "table-seq", "property": "data", "value": None}]),
     "this page cannot use a value it sent: Error binding parameter 1: type 'dict' is not "
     "supported"),
])
def test_bad_dash_updates_are_400s_naming_the_problem(site: Site, body: bytes,
                                                      detail: str) -> None:
    r = site.client.post("/_dash-update-component", content=body,
                         headers={"content-type": "application/json"})
    assert (r.status_code, r.json()["detail"]) == (400, detail)


def test_a_good_dash_update_still_works(site: Site) -> None:
    r = site.client.post("/_dash-update-component", headers={"content-type": "application/json"},
                         content=_update("page.children", {"id": "page", "property": "children"},
                                         [{"id": "url", "property": "pathname",
                                           "value": "/tables/T1"}]))
    assert r.status_code == 200 and "Table T1" in r.text


@pytest.mark.parametrize(("query", "detail"), [
    ("from=soon", "from: &#39;soon&#39; is not a day (YYYY-MM-DD)"),
    ("from=2026-03-02&to=2026-03-01", "to: 2026-03-01 is before the first day 2026-03-02"),
    ("page=-1", "page: &#39;-1&#39; is not a page number (1 to 200,000)"),
    ("state=maybe", "state: &#39;maybe&#39; is not one of the choices"),
    ("table=" + "x" * 201, "table: at most 200 characters"),
])
def test_bad_history_filters_are_400s_naming_the_field(site: Site, query: str,
                                                       detail: str) -> None:
    """The history page (server-rendered since issue 17) answers a filter it cannot use
    with a 400 page that names the field, never a traceback."""
    r = site.client.get(f"/history?{query}")
    assert r.status_code == 400 and detail in r.text


@pytest.mark.parametrize("path", ["/_dash-component-suites/dash/nope.js",
                                  "/_dash-component-suites/no_such_package/x.js",
                                  "/_dash-component-suites/dash/",
                                  "/_dash-component-suites/os/path.py"])
def test_unknown_component_suite_paths_are_404s(site: Site, path: str) -> None:
    r = site.client.get(path)
    assert r.status_code == 404
    assert r.json()["detail"].startswith("no such dashboard component file")


def test_a_content_length_that_is_not_a_number_is_a_400(site: Site) -> None:
    r = site.client.post("/login", content=b"user=x", headers={"content-length": "12abc"})
    assert r.status_code == 400 and "Content-Length" in r.json()["detail"]
