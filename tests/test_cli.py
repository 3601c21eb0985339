"""The `roads` command: contracts, JSON, exit codes and one-line errors."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from roads.cli import EXIT_BUSY, main
from roads.store import journal_queue
from tests.hung_writer import hung_writer


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [[], ["rules"], ["odds"], ["simulate"], ["summary"],
                                     ["board"], ["ingest"], ["store"], ["store", "info"],
                                     ["store", "compact"], ["stats"], ["check"], ["export"],
                                     ["verify"], ["keys"], ["batch"], ["batch", "stats"], ["audit"],
                                     ["purge"], ["serve"], ["users"], ["users", "add"],
                                     ["users", "list"], ["users", "key"], ["users", "passwd"],
                                     ["prepare"]])
def test_help_everywhere(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0 and "Usage:" in result.output


def test_rules_list_and_json() -> None:
    result = run("rules")
    assert result.exit_code == 0
    assert [line.split()[0] for line in result.output.splitlines()] == [
        "standard-8", "standard-6", "casino-6", "live-8", "tie9-8", "tie9-6", "ez-8"]
    data = json.loads(run("rules", "casino-6", "--json").output)
    assert data["decks"] == 6 and data["payouts"]["banker"] == "19:20"
    assert data["shoe"] == {"cut_card_from_end": [7, 7], "end_rule": "last-coup",
                            "burn_rule": "first-card"}


def test_odds_json_contract(exact_fixture: dict[str, Any]) -> None:
    result = run("odds", "--rules", "standard-8", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    expected = exact_fixture["decks"]["8"]
    assert data["ways"] == {k: expected[k] for k in ("banker", "player", "tie", "total")}
    assert all(isinstance(v, int) for v in data["ways"].values())
    assert data["house_edge"]["banker"] == pytest.approx(0.01057906, abs=1e-8)
    assert data["probability"]["tie"] == pytest.approx(expected["tie"] / expected["total"])


def test_odds_with_seen_cards_and_decks() -> None:
    six = json.loads(run("odds", "--decks", "6", "--json").output)
    assert six["ways"]["total"] == 878869206895680
    seen = json.loads(run("odds", "--seen", "As 10h K♠, 9c", "--json").output)
    assert seen["cards"] == 412 and seen["composition"]["A"] == 31
    effects = json.loads(run("odds", "--effects", "--json").output)["effects_of_removal"]
    assert set(effects) == {"A", *map(str, range(2, 10)), "0"}
    text = run("odds", "--rules", "ez-8").output
    assert "dragon7" in text and "panda8" in text and "Information only" in text


def test_counts_name_every_rank_or_the_rest_explicitly(exact_fixture: dict[str, Any]) -> None:
    every = ",".join(f"{r}=32" for r in ("A", *map(str, range(2, 11)), "J", "Q", "K"))
    full = json.loads(run("odds", "--counts", every, "--json").output)
    rest = json.loads(run("odds", "--counts", "*=32", "--json").output)
    assert full["ways"] == rest["ways"]
    assert full["ways"]["banker"] == exact_fixture["decks"]["8"]["banker"]
    no_aces = json.loads(run("odds", "--counts", "A=0,*=32", "--json").output)
    assert no_aces["cards"] == 384 and no_aces["composition"]["A"] == 0
    assert no_aces["composition"]["K"] == 32 and no_aces["decks"] is None
    assert "explicit composition: 384 cards" in run("odds", "--counts", "A=0,*=32").output
    assert "*=N" in run("odds", "--help").output


def test_odds_labels_an_overridden_deck_count_honestly() -> None:
    text = run("odds", "--decks", "6").output
    assert text.splitlines()[0] == "standard-8 with 6 decks: 312 cards in the shoe"
    assert run("odds", "--decks", "1").output.startswith("standard-8 with 1 deck: 52 cards")
    data = json.loads(run("odds", "--decks", "6", "--json").output)
    assert data["rules"] == "standard-8" and data["decks"] == 6 and data["cards"] == 312
    assert run("odds").output.startswith("standard-8: 416 cards")


def test_rules_file_heads_with_its_own_name_and_description(tmp_path: Path) -> None:
    club = tmp_path / "club.toml"
    club.write_text('name = "club-6"\nbase = "standard-6"\n[payouts]\ntie = "9:1"\n')
    first = run("rules", str(club)).output.splitlines()[0]
    assert first == "club-6: custom, based on standard-6; changes payouts.tie"
    club.write_text('name = "club-6"\nbase = "standard-6"\ndescription = "Club: Tie 9:1"\n'
                    '[payouts]\ntie = "9:1"\n')
    assert run("rules", str(club)).output.splitlines()[0] == "club-6: Club: Tie 9:1"
    assert json.loads(run("rules", str(club), "--json").output)["description"] == "Club: Tie 9:1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["odds", "--rules", "nope"], "unknown rule set 'nope'"),
        (["odds", "--seen", "As Xx"], "not a card: 'Xx'"),
        (["odds", "--decks", "1", "--seen", "As As"], "card As seen 2 times"),
        (["odds", "--counts", "A=-3"], "negative count -3 for rank A"),
        (["odds", "--counts", "A=three"], "cannot read 'A=three'"),
        (["odds", "--counts", "A=3,*=0"], "a coup needs 6 cards"),
        (["odds", "--counts", "A=3,2=4"],
         "--counts: no count for ranks 3, 4, 5, 6, 7, 8, 9, 10, J, Q, K (give every rank, or *=N"),
        (["odds", "--counts", "A=3,A=4,*=1"], "--counts: rank A given twice"),
        (["odds", "--counts", "10=3,T=4,*=1"], "--counts: rank 10 given twice"),
        (["odds", "--counts", "A=1,*=-2"], "--counts: negative count -2 for *"),
        (["odds", "--decks", "40"], "--decks 40"),
        (["rules", "nope"], "unknown rule set"),
        (["simulate", "--shoes", "1", "--rules", "missing.toml"], "no such rule-set file"),
    ],
)
def test_errors_are_one_line_with_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("roads: error:")


def test_simulate_then_summary(tmp_path: Path) -> None:
    out = tmp_path / "store"
    result = run("simulate", "--shoes", "5", "--tables", "2", "--seed", "7",
                 "--out", str(out), "--json")
    assert result.exit_code == 0
    summary = json.loads(result.output)
    assert summary["seed"] == 7 and summary["shoes"] == 5 and summary["coups"] > 5 * 60
    table = json.loads(run("summary", "--store", str(out), "--json").output)
    assert len(table) == 5
    assert sum(r["coups"] for r in table) == summary["coups"]
    assert all(r["banker"] + r["player"] + r["tie"] == r["coups"] for r in table)
    assert all(len(r["outcomes"]) == r["coups"] for r in table)
    text = run("summary", "--store", str(out)).output
    assert "SIM-01" in text and "SIM-02" in text
    empty = run("summary", "--store", str(tmp_path / "nothing"))
    assert empty.exit_code == 2 and "no store at" in empty.output


def test_simulate_rejects_bad_counts() -> None:
    result = CliRunner().invoke(main, ["simulate", "--shoes", "0"])
    assert result.exit_code == 2 and "--shoes" in result.output


@pytest.mark.parametrize(("args", "says"), [
    (["--shoes", "99999999999999999999999"], "deal between 1 and 10,000,000 shoes"),
    (["--shoes", "2", "--start", "9999-12-31T23:59:59"], "past the end of 2200"),
    (["--shoes", "48", "--start", "2200-12-30"], "past the end of 2200"),
    (["--shoes", "2", "--start", "1899-12-31"], "starts in 1900 or later"),
])
def test_simulate_refuses_a_run_it_could_not_store(tmp_path: Path, args: list[str],
                                                   says: str) -> None:
    """A mistyped --shoes dealt (and wrote 15 GB) until killed; a late --start stored year
    10000 timestamps that crashed every later read. Both are refused, nothing written, as is
    a clock outside the years an import accepts (its export could not be read back)."""
    out = tmp_path / "store"
    result = CliRunner().invoke(main, ["simulate", "--seed", "1", "--out", str(out),
                                       "--quiet", *args])
    assert result.exit_code == 2 and says in result.output
    assert not out.exists()
    fits = CliRunner().invoke(main, ["simulate", "--seed", "1", "--out", str(out), "--quiet",
                                     "--shoes", "2", "--start", "2200-12-30"])
    assert fits.exit_code == 0, fits.output  # (the last hours an import accepts still deal)
    assert run("summary", "--store", str(out)).exit_code == 0


def test_board_json_contract() -> None:
    result = run("board", "BBPPPBPBB", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert set(data) >= {"bead_plate", "big_road", "big_eye_boy", "small_road",
                         "cockroach_pig", "ask"}
    assert "".join("R" if m["color"] == "red" else "B" for m in data["big_eye_boy"]) == "RBBBRB"
    assert data["big_road"][0] == {**data["big_road"][0], "col": 0, "row": 0, "outcome": "B",
                                   "ties": 0, "coup": 0}
    assert data["ask"]["banker"]["big_eye_boy"] in ("red", "blue")


def test_board_from_stdin_and_conventions() -> None:
    runner = CliRunner()
    own = runner.invoke(main, ["board", "-", "--json", "--leading-ties", "own-column"],
                        input="TTBPTPBBTPB\n")
    data = json.loads(own.output)
    assert "".join(m["color"][0].upper() for m in data["cockroach_pig"]) == "BBR"
    assert data["big_road"][0]["outcome"] == "T" and data["big_road"][0]["ties"] == 2
    text = run("board", "BBPPPBPBB").output
    assert "Big Road" in text and "B? big_eye_boy=red" in text


def test_board_errors() -> None:
    result = CliRunner().invoke(main, ["board", "BBPXP"])
    assert result.exit_code == 2
    assert "invalid outcome 'X' at position 4" in result.output
    assert CliRunner().invoke(main, ["board"]).exit_code == 2
    bad = CliRunner().invoke(main, ["board", "BP", "--leading-ties", "sideways"])
    assert bad.exit_code == 2


def test_board_of_a_stored_shoe_with_svg(tmp_path: Path) -> None:
    out = tmp_path / "store"
    run("simulate", "--shoes", "2", "--seed", "3", "--out", str(out), "--quiet")
    svg = tmp_path / "shoe.svg"
    result = run("board", "--store", str(out), "--table", "SIM-01", "--shoe", "sim3-0000002",
                 "--svg", str(svg), "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert len(data["bead_plate"]) == data["counts"]["coups"] > 40
    assert any(c["total"] is not None for c in data["bead_plate"])
    assert svg.read_text().startswith("<svg") and "SIM-01 · sim3-0000002" in svg.read_text()
    missing = CliRunner().invoke(main, ["board", "--store", str(out), "--table", "SIM-01",
                                        "--shoe", "nope"])
    assert missing.exit_code == 2 and "no coups of table 'SIM-01' shoe 'nope'" in missing.output


def test_ingest_and_store_commands(tmp_path: Path) -> None:
    store = tmp_path / "store"
    good = tmp_path / "good.csv"
    good.write_text("table,shoe,coup,player_cards,banker_cards\nT1,S1,1,9h Kd,5s 2c\n"
                    "T1,S1,2,2h 3d 4c,5s 2c\n")
    result = run("ingest", str(good), "--store", str(store), "--json")
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["totals"] == {"rows_read": 2, "accepted": 2, "replaced": 0, "quarantined": 0,
                                "flagged": 0}
    bad = tmp_path / "bad.csv"
    bad.write_text("table,shoe,coup,outcome\nT1,S2,1,maybe\nT1,S2,2,B\n")
    result = CliRunner().invoke(main, ["ingest", str(bad), "--store", str(store)])
    assert result.exit_code == 1  # something was quarantined
    assert "quarantined: unknown outcome label: 1" in result.output
    info = json.loads(run("store", "info", "--store", str(store), "--json").output)
    assert info["coups"]["rows"] == 3 and info["journal"]["chain_ok"] is True
    text = run("store", "compact", "--store", str(store)).output
    assert "compacted" in text
    mapped = CliRunner().invoke(main, ["ingest", str(good), "--store", str(store),
                                       "--map", "nonsense=x"])
    assert mapped.exit_code == 2 and "--map 'nonsense=x'" in mapped.output
    missing = CliRunner().invoke(main, ["ingest", str(tmp_path / "none.csv"), "--store",
                                        str(store)])
    assert missing.exit_code == 2 and "no such file" in missing.output


def test_stats_and_check_commands(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run("simulate", "--shoes", "30", "--tables", "3", "--seed", "5", "--out", str(store),
        "--quiet")
    data = json.loads(run("stats", "--store", str(store), "--json").output)
    stats = data["statistics"]
    assert stats["shoes"] == 30 and stats["rules"] == ["standard-8"]
    assert set(stats["outcomes"]) == {"banker", "player", "tie"}
    assert data["randomness"]["correction"] == "Holm"
    shoe = json.loads(run("stats", "--store", str(store), "--table", "SIM-01", "--shoe",
                          "sim5-0000001", "--json").output)
    assert shoe["statistics"]["shoes"] == 1 and len(shoe["live_odds"]) == \
        shoe["statistics"]["coups"] + 1
    text = run("stats", "--store", str(store), "--table", "SIM-02").output
    assert "Banker" in text and "randomness tests" in text
    clean = CliRunner().invoke(main, ["check", "--store", str(store)])
    assert clean.exit_code == 0 and "nothing flagged" in clean.output
    # A shoe dealt twice makes check fail.
    from roads.store import Store

    coups = Store.open(store).read.coups()
    copy = tmp_path / "again.csv"
    coups.filter(pl.col("shoe_id") == "sim5-0000001").select(
        "table_id", pl.lit("AGAIN").alias("shoe_id"), "coup",
        pl.col("outcome").cast(pl.String),
        pl.col("player_cards").cast(pl.List(pl.String)).list.join(" "),
        pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" ")).write_csv(copy)
    run("ingest", str(copy), "--store", str(store))
    flagged = CliRunner().invoke(main, ["check", "--store", str(store), "--json"])
    assert flagged.exit_code == 1
    report = json.loads(flagged.output)
    assert report["flagged"] and any(f["check"] == "repeated shoe" for f in report["integrity"])
    missing = CliRunner().invoke(main, ["stats", "--store", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "no store at" in missing.output
    assert not (tmp_path / "none").exists()
    # A mistyped table or a reversed range said "0 coups checked: nothing flagged", exit 0.
    for command in ("stats", "check"):
        typo = CliRunner().invoke(main, [command, "--store", str(store), "--table", "SIM-1"])
        assert typo.exit_code == 2 and typo.output.count("\n") == 1
        assert "--table SIM-1: the store holds no such table (its tables: SIM-01, SIM-02" \
            in typo.output
        backwards = CliRunner().invoke(main, [command, "--store", str(store), "--from",
                                              "2026-03-05", "--to", "2026-03-01"])
        assert backwards.exit_code == 2
        assert "--from 2026-03-05 is after --to 2026-03-01" in backwards.output


def test_export_verify_and_keys_commands(tmp_path: Path) -> None:
    store = tmp_path / "store"
    run("simulate", "--shoes", "2", "--seed", "4", "--out", str(store), "--quiet")
    priv, pub = tmp_path / "k.pem", tmp_path / "k.pub"
    assert run("keys", str(priv), str(pub)).exit_code == 0
    out = tmp_path / "bundle"
    result = run("export", "--store", str(store), "--table", "SIM-01", "--shoe",
                 "sim4-0000001", "--out", str(out), "--sign", str(priv), "--by", "auditor")
    assert result.exit_code == 0 and "(signed)" in result.output
    ok = CliRunner().invoke(main, ["verify", str(out), "--pubkey", str(pub)])
    assert ok.exit_code == 0 and ok.output.startswith("OK:")
    (out / "shoes.csv").write_text("tampered\n")
    bad = CliRunner().invoke(main, ["verify", str(out), "--pubkey", str(pub)])
    assert bad.exit_code == 1 and "FAILED: shoes.csv" in bad.output
    usage = CliRunner().invoke(main, ["export", "--store", str(store), "--out", str(tmp_path)])
    assert usage.exit_code == 2 and "choose --shoe" in usage.output


def test_users_add_list_and_key(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    added = CliRunner().invoke(main, ["users", "add", "ana", "--role", "supervisor",
                                      "--password-stdin", "--store", store],
                               input="a long enough password\n")
    assert added.exit_code == 0, added.output
    listed = json.loads(run("users", "list", "--json", "--store", store).output)
    assert [(u["name"], u["role"]) for u in listed] == [("ana", "supervisor")]
    key = run("users", "key", "--table", "T1", "--store", store).output.strip()
    assert key.startswith("rk_") and len(key) > 40
    short = CliRunner().invoke(main, ["users", "add", "bob", "--role", "dealer",
                                      "--password-stdin", "--store", store], input="short\n")
    assert short.exit_code == 2 and "at least 10" in short.output
    role = CliRunner().invoke(main, ["users", "add", "bob", "--role", "boss",
                                     "--password-stdin", "--store", store], input="x" * 12)
    assert role.exit_code == 2


def test_an_account_change_behind_a_held_accounts_lock_exits_busy_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``auth.sqlite``'s write lock held (a login waiting for a hung journal writer): an
    account change waits the journal's queue wait at most, then one line and exit 75 (try
    again later, not 1: nothing was found wrong). Before the fix it waited SQLite's 30 s
    busy timeout and died with a traceback."""
    store = tmp_path / "store"
    added = CliRunner().invoke(main, ["users", "add", "ana", "--role", "supervisor",
                                      "--password-stdin", "--store", str(store)],
                               input="a long enough password\n")
    assert added.exit_code == 0, added.output
    monkeypatch.setattr(journal_queue, "QUEUE_WAIT_SECONDS", 0.3)
    other = sqlite3.connect(store / "auth.sqlite", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["users", "disable", "ana", "--store", str(store)])
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert result.exit_code == EXIT_BUSY == 75, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("roads: error: the accounts are busy")
    assert run("users", "disable", "ana", "--store", str(store)).exit_code == 0


def test_console_command_keeps_output_exit_codes_and_files(tmp_path: Path) -> None:
    """The installed ``roads`` command skips the interpreter's teardown (roads.cli.run):
    its output must still arrive whole, its exit codes mean the same, its files are there,
    and it ends (the kept pool of part writers once held a joining exit forever)."""
    roads = Path(sys.executable).with_name("roads")
    store = tmp_path / "store"
    done = subprocess.run([str(roads), "simulate", "--shoes", "2", "--tables", "1",
                           "--seed", "5", "--out", str(store), "--quiet"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("dealt 2 shoes")
    summary = subprocess.run([str(roads), "summary", "--store", str(store), "--json"],
                             capture_output=True, text=True, check=False)
    assert summary.returncode == 0, summary.stderr
    assert len(json.loads(summary.stdout)) == 2  # one row per shoe, whole
    bad = subprocess.run([str(roads), "board", "BBPXP"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("roads: error:") and bad.stdout == ""


def test_a_write_behind_a_hung_writer_exits_busy_with_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    good = tmp_path / "good.csv"
    good.write_text("table,shoe,coup,outcome\nT1,S1,1,B\n")
    run("ingest", str(good), "--store", str(store))
    monkeypatch.setattr(journal_queue, "QUEUE_WAIT_SECONDS", 0.3)
    other = tmp_path / "other.csv"
    other.write_text("table,shoe,coup,outcome\nT1,S2,1,P\n")
    with hung_writer(store / "journal.sqlite"):
        result = CliRunner().invoke(main, ["ingest", str(other), "--store", str(store)])
    assert result.exit_code == EXIT_BUSY == 75, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("roads: error: the journal is busy")
    info = json.loads(run("store", "info", "--store", str(store), "--json").output)
    assert info["coups"]["rows"] == 1 and info["journal"]["chain_ok"] is True
