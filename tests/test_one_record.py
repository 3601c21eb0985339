"""One record: a store built through the public entry points and read by every reader gives
the same coups per shoe, equal to an expectation computed here from what was entered.

Entered: live shoes through the HTTP API with table keys (one sealed per table, one left
open), corrections through the corrections API (a personal token asks, a supervisor's
session decides: one void, one amendment, and a void of an imported coup), `roads ingest`
of a card-level CSV and of an outcome-only file, and an import that overlaps the live shoes
(refused as conflicts, never a second copy).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from dashboard.app import create_app
from dashboard.config import SiteConfig
from dashboard.context import Context
from dashboard.screen import screen_payload
from roads.cli import main
from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.tableau import expected_hands

PASSWORD = "correct horse battery"
#: (player cards, banker cards, outcome) of legal coups: the first of an engine-dealt shoe.
HANDS = [(" ".join(p), " ".join(b), expected_hands(p, b).outcome)
         for p, b in deal_shoe(get_rules("standard-8"), 2026).coups[:6]]


def _cards(n: int) -> dict[str, Any]:
    p, b, _ = HANDS[n % len(HANDS)]
    return {"player_cards": p.split(), "banker_cards": b.split()}


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[
        tuple[str, str], str], Context]]:
    """The store, the expected outcome string of every shoe, the server's context."""
    tmp = tmp_path_factory.mktemp("record")
    root = tmp / "store"
    app, ctx = create_app(root, SiteConfig())
    for name, role in (("dealer", "dealer"), ("super", "supervisor")):
        ctx.auth.add_user(name, role, PASSWORD)
    keys = {t: ctx.auth.issue_key(t) for t in ("T1", "T2")}
    token = ctx.auth.issue_token("dealer")
    expected: dict[tuple[str, str], list[str | None]] = {}
    with TestClient(app.server) as client:
        def post(path: str, body: dict[str, Any] | None = None, key: str | None = None,
                 csrf: str | None = None) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            if csrf:
                headers["X-CSRF-Token"] = csrf
            r = client.post(path, json=body, headers=headers)
            assert r.status_code in (200, 201), r.text
            return dict(r.json())

        def deal(table: str, shoe: str, coups: int, cards: bool, close: bool) -> None:
            post(f"/api/tables/{table}/shoes", {"shoe_id": shoe}, keys[table])
            outcomes: list[str | None] = []
            for n in range(coups):
                body = _cards(n) if cards or n % 2 else {"outcome": "BPT"[n % 3]}
                outcome = post(f"/api/tables/{table}/coups", body, keys[table])["outcome"]
                outcomes.append(outcome)
            if close:
                post(f"/api/tables/{table}/shoes/close", key=keys[table])
            expected[(table, shoe)] = outcomes

        deal("T1", "L1", 12, False, True)
        deal("T2", "M1", 8, True, True)
        deal("T1", "L2", 6, False, False)  # left open
        # The supervisor logs in (a browser session with its CSRF token).
        page = client.get("/login")
        login_csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
        client.post("/login", content=f"user=super&password={PASSWORD}&csrf={login_csrf}"
                    "&next=/", headers={"content-type": "application/x-www-form-urlencoded"},
                    follow_redirects=False)
        session = ctx.auth.session(client.cookies.get("roads_session"))
        assert session is not None

        def correct(table: str, shoe: str, coup: int, amended: dict[str, Any] | None) -> None:
            body = {"shoe_id": shoe, "coup": coup, "reason": "video review",
                    "action": "amend" if amended else "void",
                    **({"amended": amended} if amended else {})}
            request = post(f"/api/tables/{table}/corrections", body, token)["request"]
            decided = client.post(f"/api/corrections/{request}", json={"decision": "approve"},
                                  headers={"X-CSRF-Token": session.csrf})
            assert decided.status_code == 200, decided.text
            if amended:
                expected[(table, shoe)][coup - 1] = amended["outcome"]
            else:
                expected[(table, shoe)][coup - 1] = None

        correct("T1", "L1", 3, None)
        correct("T2", "M1", 2, {"outcome": "P"})
        # Imports through the command line: card-level CSV, outcome-only shoe lines.
        csv = tmp / "cards.csv"
        rows = [f"T3,I{s},{n + 1},{HANDS[(n + s) % 6][0]},{HANDS[(n + s) % 6][1]}"
                for s in (1, 2) for n in range(7)]
        csv.write_text("table,shoe,hand,player cards,banker cards\n" + "\n".join(rows) + "\n")
        lines = tmp / "history.txt"
        lines.write_text("BPBBT\nPPTB\n")
        runner = CliRunner()
        for path, extra in ((csv, []), (lines, ["--table", "T4"])):
            done = runner.invoke(main, ["ingest", str(path), "--store", str(root), *extra])
            assert done.exit_code == 0, done.output
        for s in (1, 2):
            expected[("T3", f"I{s}")] = [HANDS[(n + s) % 6][2] for n in range(7)]
        expected[("T4", "history-1")] = list("BPBBT")
        expected[("T4", "history-2")] = list("PPTB")
        correct("T3", "I1", 1, None)  # a correction of an imported coup
        # An import overlapping the live shoes: every row a conflict, none stored twice.
        overlap = tmp / "overlap.csv"
        overlap.write_text("table,shoe,coup,result\nT1,L1,1,B\nT1,L1,13,P\nT1,L2,2,B\n"
                           "T2,M1,9,T\n")
        done = runner.invoke(main, ["ingest", str(overlap), "--store", str(root), "--json"])
        assert done.exit_code == 1  # quarantined
        report = json.loads(done.output)["files"][0]
        assert (report["accepted"], report["conflicts"]) == (0, 4)
        yield root, {k: "".join(o for o in v if o) for k, v in expected.items()}, ctx


def _cli(*args: str) -> Any:
    done = CliRunner().invoke(main, list(args))
    assert done.exit_code in (0, 1), done.output
    return json.loads(done.output) if "--json" in args else done.output


def test_summary(record: Any) -> None:
    root, expected, _ = record
    rows = _cli("summary", "--store", str(root), "--json", "--limit", "100")
    assert {(r["table_id"], r["shoe_id"]): r["outcomes"] for r in rows} == expected
    assert [r["open"] for r in rows if r["shoe_id"] == "L2"] == [True]


def test_board_of_every_shoe(record: Any) -> None:
    root, expected, _ = record
    for (table, shoe), outcomes in expected.items():
        board = _cli("board", "--store", str(root), "--table", table, "--shoe", shoe, "--json")
        assert "".join(c["outcome"] for c in board["bead_plate"]) == outcomes


def test_statistics_whole_and_per_shoe(record: Any) -> None:
    root, expected, _ = record
    whole = _cli("stats", "--store", str(root), "--json")["statistics"]
    everything = "".join(expected.values())
    assert whole["coups"] == len(everything) and whole["shoes"] == len(expected)
    for key, name in (("banker", "B"), ("player", "P"), ("tie", "T")):
        assert whole["outcomes"][key]["count"] == everything.count(name)
    for (table, shoe), outcomes in expected.items():
        one = _cli("stats", "--store", str(root), "--table", table, "--shoe", shoe,
                   "--json")["statistics"]
        assert one["coups"] == len(outcomes)
        assert one["outcomes"]["banker"]["count"] == outcomes.count("B")
    table = _cli("stats", "--store", str(root), "--table", "T1", "--json")["statistics"]
    assert table["coups"] == len(expected[("T1", "L1")]) + len(expected[("T1", "L2")])
    check = _cli("check", "--store", str(root), "--json")
    assert check["coups"] == len(everything)


def test_export_lists_the_same_coups_and_marks_the_corrections(record: Any,
                                                               tmp_path: Path) -> None:
    root, expected, _ = record
    out = tmp_path / "bundle"
    _cli("export", "--store", str(root), "--all", "--out", str(out), "--quiet")
    coups = pl.read_csv(out / "coups.csv", infer_schema=False)
    standing = coups.filter(pl.col("correction").fill_null("") != "voided")
    got = {(t, s): "".join(g.sort(pl.col("coup").cast(pl.Int32))["outcome"])
           for (t, s), g in standing.group_by("table_id", "shoe_id")}
    assert got == expected
    assert sorted(coups.filter(pl.col("correction").is_not_null())
                  .select("table_id", "shoe_id", "coup", "correction").rows()) == \
        [("T1", "L1", "3", "voided"), ("T2", "M1", "2", "amended"), ("T3", "I1", "1", "voided")]
    shoes = pl.read_csv(out / "shoes.csv", infer_schema=False)
    assert set(shoes.select("table_id", "shoe_id").rows()) == set(expected)
    assert shoes.filter(pl.col("open") == "true")["shoe_id"].to_list() == ["L2"]
    entries = dict(coups.group_by("entry").len().rows())
    assert set(entries) == {"api", "import"}
    assert _cli("verify", str(out)).startswith("OK")


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_batch_jobs(record: Any, tmp_path: Path, engine: str) -> None:
    root, expected, _ = record
    _cli("batch", "roads", "--engine", engine, "--store", str(root), "--out", str(tmp_path))
    roads = pl.read_parquet(tmp_path / "roads" / "part-0.parquet")
    assert {(t, s): (n, ties) for t, s, n, ties in roads.select(
        "table_id", "shoe_id", "coups", "ties").iter_rows()} == \
        {k: (len(v), v.count("T")) for k, v in expected.items()}
    _cli("batch", "stats", "--engine", engine, "--store", str(root), "--out", str(tmp_path))
    stats = json.loads((tmp_path / "stats.json").read_text())["statistics"]
    assert stats["coups"] == sum(len(v) for v in expected.values())


def test_dashboard_history_shoe_pages_screen_and_api(record: Any) -> None:
    _, expected, ctx = record
    listed, total = ctx.service.shoe_page(limit=1000)  # what /history lists
    assert total == listed.height
    assert {(t, s): n for t, s, n in listed.select("table_id", "shoe_id", "coups")
            .iter_rows()} == {k: len(v) for k, v in expected.items()}
    for (table, shoe), outcomes in expected.items():
        assert "".join(c["outcome"] for c in ctx.service.shoe_coups(table, shoe)) == outcomes
    state = ctx.service.table_state("T1")
    assert state.shoe_id == "L2" and "".join(c["outcome"] for c in state.coups) == \
        expected[("T1", "L2")]
    payload = screen_payload(state, ctx.site, "en", "dark")
    assert payload["coups"] == len(expected[("T1", "L2")])
    from dashboard.api import board_json

    board = board_json(ctx, "T1")["board"]
    assert "".join(c["outcome"] for c in board["bead_plate"]) == expected[("T1", "L2")]
