"""Ingestion: every format, dirty input, the validation rules, quarantine, idempotency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from roads.errors import InputError
from roads.ingest.readers import ReadOptions, detect_format
from roads.ingest.run import IngestResult, ingest
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Selection, Store
from tests.floor import Floor

HEADER = "table,shoe,coup,player_cards,banker_cards,outcome,player_total,banker_total,dealt_at\n"


def run(tmp_path: Path, files: list[Path], **options: Any) -> tuple[Store, IngestResult]:
    store = Store.create(tmp_path / "store")
    rules = get_rules(options.pop("rules", "standard-8"))
    return store, ingest(files, store, ReadOptions(**options), rules)


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding=encoding)
    return path


def flags(store: Store) -> pl.DataFrame:
    files = sorted((store.root / "flags").glob("*.parquet"))
    return pl.read_parquet(files) if files else pl.DataFrame()


def quarantine(store: Store) -> list[dict[str, Any]]:
    return [json.loads(line) for f in sorted((store.root / "quarantine").glob("*.jsonl"))
            for line in f.read_text().splitlines()]


def test_card_level_csv_derives_everything(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", HEADER
                 + "T1,S1,1,9h Kd,5s 2c,,,,2026-03-01T20:00:00Z\n"
                 + "T1,S1,2,\"10h,Qc,5d\",\"7s,Kh\",,,,2026-03-01T20:00:40Z\n")
    store, result = run(tmp_path, [path])
    assert result.report["files"][0]["accepted"] == 2 and result.quarantined == 0
    coups = store.read.coups(Selection("T1"))
    assert coups["outcome"].to_list() == ["P", "B"]
    assert coups["player_cards"].to_list() == [["9h", "Kd"], ["Th", "Qc", "5d"]]
    assert coups["natural"].to_list() == [True, False]
    assert coups["player_total"].to_list() == [9, 5] and coups["banker_total"].to_list() == [7, 7]
    assert coups["source"].to_list() == ["import", "import"]
    shoe = store.read.shoes().row(0, named=True)
    assert shoe["rules"] == "standard-8" and shoe["coups"] == 2 and shoe["cards_dealt"] == 9


def test_tsv_dirty_labels_bom_and_a_header_with_a_newline(tmp_path: Path) -> None:
    text = ("\ufeffTable\tShoe\t\"Hand\nNo\"\tResult\n"
            "T2\tA\t1\tBanker\nT2\tA\t2\tplayer win\nT2\tA\t3\t庄\nT2\tA\t4\t閒\n"
            "T2\tA\t5\tНичья\nT2\tA\t6\tbanker win\nT2\tA\t7\t和\nT2\tA\t8\tИгрок\n")
    store, result = run(tmp_path, [write(tmp_path, "dirty.tsv", text)])
    assert result.quarantined == 0
    assert "".join(store.read.coups(Selection("T2"))["outcome"]) == "BPBPTBTP"


def test_rows_with_only_totals_or_only_an_outcome(tmp_path: Path) -> None:
    text = "table,shoe,player_total,banker_total,result\nT3,S,6,7,\nT3,S,9,9,\nT3,S,,,P\n"
    store, result = run(tmp_path, [write(tmp_path, "totals.csv", text)])
    assert result.quarantined == 0
    coups = store.read.coups(Selection("T3"))
    assert "".join(coups["outcome"]) == "BTP" and coups["coup"].to_list() == [1, 2, 3]
    assert coups["player_cards"].null_count() == 3


def test_value_level_cards_are_flagged_without_pairs(tmp_path: Path) -> None:
    text = HEADER + "T4,S,1,\"4,4\",\"0,7\",,,,\n"
    store, _ = run(tmp_path, [write(tmp_path, "values.csv", text)])
    row = store.read.coups(Selection("T4")).row(0, named=True)
    assert row["outcome"] == "P" and row["player_total"] == 8 and row["natural"] is True
    assert row["player_pair"] is None and row["player_cards"] is None
    assert "value-level" in flags(store)["rule"].to_list()


def test_shoe_lines_and_their_bad_line(tmp_path: Path) -> None:
    path = write(tmp_path, "shoes.txt", "BPPTB\nPPBX\nbbpt\n")
    assert detect_format(path) == "shoe-lines"
    store, result = run(tmp_path, [path], table_id="T5")
    coups = store.read.coups(Selection("T5"))
    assert sorted(set(coups["shoe_id"])) == ["shoes-1", "shoes-3"]
    assert result.quarantined == 1
    (bad,) = quarantine(store)
    assert bad["row"] == 2 and "invalid character 'X'" in bad["reason"]
    assert json.loads(bad["raw"]) == {"line": "PPBX"}


@pytest.mark.parametrize(
    ("cards", "rule", "message"),
    [
        # Player stands on 6; a Banker on 4 who does not draw: the "never draws on 4/5" defect
        (("3h 3d", "Ks 4c"), "tableau", "the Banker stood on 4 against the tableau"),
        (("3h 3d", "Ks 5c"), "tableau", "the Banker stood on 5 against the tableau"),
        # A stale third-card field on a natural
        (("9h Kd 4c", "5s 2c"), "tableau", "the Player drew on 9 against the tableau"),
    ],
)
def test_tableau_violations_are_stored_and_flagged(tmp_path: Path, cards: tuple[str, str],
                                                   rule: str, message: str) -> None:
    text = HEADER + f"T6,S,1,{cards[0]},{cards[1]},,,,\n"
    store, result = run(tmp_path, [write(tmp_path, "bad.csv", text)])
    assert result.report["files"][0]["accepted"] == 1 and result.quarantined == 0
    found = flags(store).filter(pl.col("rule") == rule)
    assert message in found["message"].to_list()
    assert found["row"].to_list() == [1] and found["coup"].to_list() == [1]


def test_wrong_total_and_outcome_and_pair_flags(tmp_path: Path) -> None:
    text = ("table,shoe,coup,player_cards,banker_cards,outcome,player_total,banker_total,"
            "player_pair\nT7,S,1,9h Kd,5s 2c,B,8,7,yes\n")
    store, _ = run(tmp_path, [write(tmp_path, "wrong.csv", text)])
    messages = flags(store)["message"].to_list()
    assert "Player total 8 does not match the cards (9)" in messages
    assert "outcome B does not match the cards (P)" in messages
    assert "Player pair flag contradicts the cards" in messages
    row = store.read.coups(Selection("T7")).row(0, named=True)
    assert row["outcome"] == "B" and row["player_total"] == 8  # stored as recorded


def test_an_extra_ace_of_spades(tmp_path: Path) -> None:
    custom = tmp_path / "one-deck.toml"
    custom.write_text('name = "one-deck"\ndecks = 1\n[shoe]\ncut_card_from_end = 16\n')
    text = HEADER + "T8,S,1,As Kd,Ah Kc,,,,\n" + "T8,S,2,As Qd,2h Qc,,,,\n"
    store, result = run(tmp_path, [write(tmp_path, "aces.csv", text)], rules=str(custom))
    assert result.report["files"][0]["accepted"] == 2  # stored, and flagged
    inv = flags(store).filter(pl.col("rule") == "inventory")
    assert inv.select("table_id", "shoe_id", "message").rows() == [
        ("T8", "S", "card As seen 2 times; 1 deck(s) hold 1")]
    # The same coups in an 8-deck shoe break no inventory rule.
    store8, _ = run(tmp_path / "eight", [write(tmp_path, "aces8.csv", text)])
    assert flags(store8).filter(pl.col("rule") == "inventory").is_empty()


def test_quarantine_keeps_rows_verbatim_with_file_row_and_reason(tmp_path: Path) -> None:
    text = (HEADER + "T9,S,1,As Xx,2d 3c,P,,,\n" + "T9,S,2,As,2d 3c,P,,,\n"
            + ",S,3,,,B,,,\n" + "T9,S,x,,,B,,,\n" + "T9,S,5,,,maybe,,,\n" + "T9,S,6,,,,,,\n"
            + "T9,S,99999999999,,,B,,,\n")  # beyond the canonical 32-bit coup number
    store, result = run(tmp_path, [write(tmp_path, "q.csv", text)])
    assert result.quarantined == 7
    got = {q["row"]: (q["field"], q["reason"]) for q in quarantine(store)}
    assert got == {
        1: ("player_cards", "unreadable card in the Player hand"),
        2: ("player_cards", "the Player hand must have two or three cards"),
        3: ("table_id", "no table (give a table column or --table)"),
        4: ("coup", "coup number is not a whole number"),
        5: ("outcome", "unknown outcome label"),
        6: ("outcome", "no outcome, and no cards or totals to derive it from"),
        7: ("coup", "coup number is outside 1-104 (the most coups the rule set's decks "
                    "deal)"),
    }
    first = next(q for q in quarantine(store) if q["row"] == 1)
    assert first["file"].endswith("q.csv")
    assert json.loads(first["raw"]) == {  # verbatim, under the file's own column names
        "table": "T9", "shoe": "S", "coup": "1", "player_cards": "As Xx",
        "banker_cards": "2d 3c", "outcome": "P", "player_total": None, "banker_total": None,
        "dealt_at": None}
    assert store.read.coups().is_empty()
    report = json.loads(result.report_path.read_text())
    assert report["files"][0]["quarantined_by_reason"]["unknown outcome label"] == 1


def test_idempotent_and_conflicts_never_overwrite(tmp_path: Path) -> None:
    first = write(tmp_path, "a.csv", HEADER + "T1,S1,1,,,B,,,\nT1,S1,2,,,P,,,\n")
    store, result = run(tmp_path, [first])
    assert result.report["files"][0]["accepted"] == 2
    again = ingest([first], store, ReadOptions(), get_rules("standard-8"))
    assert "already ingested" in again.report["files"][0]["skipped"]
    overlap = write(tmp_path, "b.csv", HEADER + "T1,S1,2,,,P,,,\nT1,S1,3,,,T,,,\n")
    third = ingest([overlap], store, ReadOptions(), get_rules("standard-8"))
    assert third.report["files"][0]["already_stored"] == 1
    assert third.report["files"][0]["accepted"] == 1
    conflict = write(tmp_path, "c.csv", HEADER + "T1,S1,1,,,P,,,\n")
    fourth = ingest([conflict], store, ReadOptions(), get_rules("standard-8"))
    assert fourth.report["files"][0]["conflicts"] == 1 and fourth.quarantined == 1
    assert "".join(store.read.coups(Selection("T1"))["outcome"]) == "BPT"  # coup 1 still B
    assert any("conflicts with the stored coup" in q["reason"] for q in quarantine(store))


def test_duplicate_rows_in_one_file(tmp_path: Path) -> None:
    text = HEADER + "T1,S,1,,,B,,,\nT1,S,1,,,B,,,\nT1,S,2,,,P,,,\nT1,S,2,,,B,,,\n"
    store, result = run(tmp_path, [write(tmp_path, "d.csv", text)])
    report = result.report["files"][0]
    assert report["duplicate_rows"] == 1 and report["quarantined"] == 1
    assert "".join(store.read.coups(Selection("T1"))["outcome"]) == "BP"


def test_canonical_parquet_round_trip(tmp_path: Path) -> None:
    sim = Store.create(tmp_path / "sim")
    write_simulation(Simulation(get_rules("standard-6"), shoes=3, seed=12, tables=2), sim)
    original = sim.read.coups()
    parts = sorted((tmp_path / "sim" / "coups").rglob("part-*.parquet"))
    store, result = run(tmp_path, parts, rules="standard-6")
    assert result.quarantined == 0 and result.report["totals"]["flagged"] == 0
    back = store.read.coups()
    columns = [c for c in original.columns if c not in ("source", "entry", "entered_by")]
    assert back.select(columns).equals(original.sort("table_id", "shoe_id", "coup")
                                       .select(columns))


def test_journal_events_round_trip(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "live")
    source = floor.store
    floor.open_shoe("T1", "S1")
    floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    floor.coup("T1", "B")
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(e.to_json()) + "\n" for e in source.journal.events()))
    assert detect_format(events) == "jsonl"
    store, result = run(tmp_path, [events])
    assert result.quarantined == 0
    cols = ["table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards",
            "player_total", "banker_total", "dealt_at"]
    assert store.read.coups().select(cols).equals(source.read.coups().select(cols))


def test_mapping_and_unusable_files(tmp_path: Path) -> None:
    text = "Tisch,Schuh,Ergebnis\nT1,S,B\n"
    path = write(tmp_path, "de.csv", text)
    with pytest.raises(InputError, match="no outcome or card columns"):
        run(tmp_path, [path])
    store, result = run(tmp_path / "m", [path], mapping={"table_id": "Tisch",
                                                         "shoe_id": "Schuh",
                                                         "outcome": "Ergebnis"})
    assert result.quarantined == 0 and store.read.coups()["outcome"].to_list() == ["B"]
    with pytest.raises(InputError, match="not in the file: 'Nope'"):
        run(tmp_path / "x", [path], mapping={"outcome": "Nope"})
    with pytest.raises(InputError, match="no such file"):
        run(tmp_path / "y", [tmp_path / "missing.csv"])


def test_a_shoe_numbered_past_what_its_decks_deal_is_quarantined_whole(tmp_path: Path) -> None:
    """A shoe of 150 numbered coups is several shoes under one id, or none: its coups past
    104 were quarantined one by one (one reason line each, the number in the reason) and
    its first 104 stored as if they were a shoe. Now every row of it is quarantined, under
    two reasons; a shoe with one mistyped number keeps its other coups."""
    long = "".join(f"T1,S1,{i},,,B,,,\n" for i in range(1, 151))
    typo = "".join(f"T2,S1,{i},,,P,,,\n" for i in range(1, 81)) + "T2,S1,209,,,P,,,\n"
    store, result = run(tmp_path, [write(tmp_path, "long.csv", HEADER + long + typo)])
    assert sorted(store.read.coups()["table_id"].unique()) == ["T2"]
    assert store.read.coups().height == 80
    report = json.loads(result.report_path.read_text())
    assert report["files"][0]["quarantined_by_reason"] == {
        "coup number is outside 1-104 (the most coups the rule set's decks deal)": 47,
        "the shoe would hold 150 coups; 8 decks deal at most 104": 104}
    assert result.quarantined == 151
