"""What ingest takes from each column, and what it says about the columns it leaves.

Header rows are written here as real exports write them (independently of the synonym
table), in English, Chinese (simplified and traditional), Russian and Greek; each file is
ingested end to end and the stored coup is compared field by field.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from roads.errors import InputError
from roads.ingest.header import HEADER_SYNONYMS, normalise_header
from roads.ingest.labels import HEADER_SPELLINGS
from roads.ingest.readers import FIELDS, ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Selection, Store

#: One coup written under each header row: Player 9h Kd (9, a natural), Banker 4s 4c (8, a
#: pair), so every field has a value the check can hold against the cards.
ROW = ["T1", "S1", "1", "{outcome}", "9h Kd", "4s 4c", "9", "8", "{yes}", "{no}", "{yes}",
       "2026-03-01T20:00:00Z"]
#: Header rows in the order of FIELDS, with the labels each language writes.
HEADERS = {
    "English export": (["Table", "Shoe No", "Hand No", "Result", "Player Cards", "Banker Cards",
                        "Player Total", "Banker Total", "Natural", "Player Pair",
                        "Banker Pair", "Time"], "Player", "Yes", "No"),
    "English API (camelCase)": (["tableId", "shoeNumber", "roundNo", "winner", "playerHand",
                                 "bankerHand", "playerScore", "bankerScore", "isNatural",
                                 "playerPair", "bankerPair", "startTime"], "PLAYER", "true",
                                "false"),
    "English short": (["TBL", "Shoe", "Coup #", "Outcome", "PCards", "BCards", "P Score",
                       "B Score", "Nat", "PP", "BP", "Timestamp"], "P", "1", "0"),
    "dealer-side export": (["Table Code", "Boot No", "Game No", "Win Type", "Punto",
                            "Dealer Cards", "Player Points", "Dealer Total", "Natural",
                            "P Pair", "B Pair", "Deal Time"], "Punto", "Y", "N"),
    "simplified Chinese": (["台号", "靴号", "局号", "结果", "闲牌", "庄牌", "闲点", "庄点",
                            "例牌", "闲对", "庄对", "时间"], "闲", "是", "否"),
    "simplified Chinese (long)": (["台桌号", "牌靴", "铺号", "开奖结果", "闲家牌", "庄家的牌",
                                   "闲家点数", "庄家点数", "天牌", "闲对子", "庄对子",
                                   "开牌时间"], "闲赢", "是", "否"),
    "traditional Chinese": (["檯號", "靴號", "局號", "結果", "閒牌", "莊牌", "閒點", "莊點",
                             "天牌", "閒對", "莊對", "時間"], "閒", "是", "否"),
    "traditional Chinese (long)": (["台桌號", "牌靴號", "鋪號", "開獎結果", "閒家的牌",
                                    "莊家牌", "閒點數", "莊家點數", "例牌", "閒對子", "莊對子",
                                    "開牌時間"], "閒贏", "有", "無"),
    "Russian": (["Стол", "Шуз", "Номер раздачи", "Результат", "Карты игрока",
                 "Карты банкира", "Очки игрока", "Очки банкира", "Натуральная",
                 "Пара игрока", "Пара банкира", "Время"], "Игрок", "да", "нет"),
    "Russian (other words)": (["Номер стола", "Сабо", "Раунд", "Исход", "Рука игрока",
                               "Карты банка", "Сумма игрока", "Сумма банкира", "Натурал",
                               "пара игрока", "ПАРА БАНКА", "Дата и время"], "Победа игрока",
                              "Да", "Нет"),
    "Greek": (["Τραπέζι", "Σαμπό", "Παρτίδα", "Αποτέλεσμα", "Φύλλα παίκτη", "Φύλλα μπάνκας",
               "Πόντοι παίκτη", "Πόντοι μπάνκας", "Φυσικό", "Ζεύγος παίκτη", "Ζεύγος μπάνκας",
               "Ώρα"], "Παίκτης", "ναι", "όχι"),
    "Greek (capitals, no accents)": (["ΤΡΑΠΕΖΙ", "ΔΙΑΝΟΜΕΑΣ", "ΓΥΡΟΣ", "ΝΙΚΗΤΗΣ",
                                      "ΚΑΡΤΕΣ ΠΑΙΚΤΗ", "ΚΑΡΤΕΣ ΤΡΑΠΕΖΙΤΗ", "ΣΥΝΟΛΟ ΠΑΙΚΤΗ",
                                      "ΣΥΝΟΛΟ ΤΡΑΠΕΖΙΤΗ", "ΦΥΣΙΚΟ", "ΖΕΥΓΑΡΙ ΠΑΙΚΤΗ",
                                      "ΖΕΥΓΑΡΙ ΜΠΑΝΚΑΣ", "ΗΜΕΡΟΜΗΝΙΑ ΚΑΙ ΩΡΑ"], "ΠΑΙΚΤΗΣ",
                                     "ΝΑΙ", "ΟΧΙ"),
}


def _ingest(tmp_path: Path, text: str, name: str = "in.csv", **options: Any
            ) -> tuple[Store, dict[str, Any]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    store = Store.create(tmp_path / "store")
    result = ingest([path], store, ReadOptions(**options), get_rules("standard-8"))
    return store, result.report["files"][0]


@pytest.mark.parametrize("name", list(HEADERS))
def test_every_field_is_read_under_real_headers_of_each_language(tmp_path: Path,
                                                                 name: str) -> None:
    header, outcome, yes, no = HEADERS[name]
    row = [v.format(outcome=outcome, yes=yes, no=no) for v in ROW]
    store, report = _ingest(tmp_path, ",".join(header) + "\n" + ",".join(row) + "\n")
    assert report["columns"] == dict(zip(FIELDS, header, strict=True))
    assert report["ignored_columns"] == [] and report["suggestions"] == []
    assert report["accepted"] == 1 and report["flagged"] == 0 and report["quarantined"] == 0
    coup = store.read.coups(Selection("T1")).row(0, named=True)
    assert (coup["shoe_id"], coup["coup"], coup["outcome"]) == ("S1", 1, "P")
    assert (coup["player_cards"], coup["banker_cards"]) == (["9h", "Kd"], ["4s", "4c"])
    assert (coup["player_total"], coup["banker_total"], coup["natural"]) == (9, 8, True)
    assert (coup["player_pair"], coup["banker_pair"]) == (False, True)
    assert coup["dealt_at"].isoformat() == "2026-03-01T20:00:00+00:00"


def _scripts(spellings: tuple[str, ...]) -> set[str]:
    names = {unicodedata.name(ch, "") for s in spellings for ch in s if ch.isalpha()}
    return {script for script in ("LATIN", "CJK", "CYRILLIC", "GREEK")
            if any(n.startswith(script) for n in names)}


def test_each_field_has_spellings_in_every_script_and_no_spelling_names_two_fields() -> None:
    for name in FIELDS:
        assert _scripts(HEADER_SPELLINGS[name]) == {"LATIN", "CJK", "CYRILLIC", "GREEK"}, name
    owners: dict[str, set[str]] = {}
    for name, spellings in HEADER_SPELLINGS.items():
        for spelling in spellings:
            owners.setdefault(normalise_header(spelling), set()).add(name)
    assert {k: v for k, v in owners.items() if len(v) > 1} == {}
    assert set(HEADER_SYNONYMS) == set(owners) and "" not in owners


@pytest.mark.parametrize(("written", "field"), [
    ("Player Cards", "player_cards"), ("player_cards", "player_cards"),
    ("PLAYER-CARDS", "player_cards"), ("playerCards", "player_cards"),
    ("\ufeffTable", "table_id"), ("Hand No.", "coup"), ("Coup (#)", "coup"),
    ("Стол №", "table_id"), ("Счет игрока", "player_total"), ("Счёт игрока", "player_total"),
    ("ΑΠΟΤΕΛΕΣΜΑ", "outcome"), ("Αποτέλεσμα", "outcome"), ("台桌ＩＤ", "table_id"),
])
def test_case_spacing_punctuation_accents_and_width_do_not_matter(written: str,
                                                                  field: str) -> None:
    assert HEADER_SYNONYMS[normalise_header(written)] == field


def test_columns_not_read_are_listed_with_a_suggestion_and_nothing_else_is_guessed(
        tmp_path: Path) -> None:
    text = ("Table,Shoe,Hand No,Result,Winner,Player Crds,Banker Cards,Dealer,Shift\n"
            "T1,S1,1,P,P,9h Kd,5s 2c,ana,night\n")
    _, report = _ingest(tmp_path, text)
    assert report["ignored_columns"] == ["Winner", "Player Crds", "Dealer", "Shift"]
    assert report["suggestions"] == [
        "'Winner' also names outcome, which is read from 'Result'; use --map "
        "outcome=Winner to read it instead",
        "did you mean player_cards? use --map 'player_cards=Player Crds'"]
    # One card column only: the row cannot be stored with half its cards, and the warning
    # says why and names the fix.
    assert report["quarantined"] == 1
    (warning,) = report["warnings"]
    assert "'Player Crds' hold hands of cards but no player_cards column" in warning
    assert "rows with cards for one side are quarantined" in warning


def test_hand_columns_under_unknown_headers_are_warned_about_not_silently_dropped(
        tmp_path: Path) -> None:
    text = ("Table,Shoe,Hand No,Result,Hand A,Hand B\n"
            "T1,S1,1,P,9h Kd,5s 2c\nT1,S1,2,B,\"10h,Qc,5d\",\"7s,Kh\"\nT1,S1,3,B,\"9,4\",\"5,2\"\n")
    store, report = _ingest(tmp_path, text)
    assert report["ignored_columns"] == ["Hand A", "Hand B"]
    (warning,) = report["warnings"]
    assert "'Hand A', 'Hand B' hold hands of cards" in warning
    assert "stored outcome-only" in warning
    assert "--map 'player_cards=Hand A' --map 'banker_cards=Hand B'" in warning
    assert report["suggestions"] == [
        "did you mean player_cards? use --map 'player_cards=Hand A'",
        "did you mean banker_cards? use --map 'banker_cards=Hand B'"]
    coups = store.read.coups(Selection("T1"))  # stored as the warning says: no cards
    assert coups["player_cards"].null_count() == 3 and coups["outcome"].to_list() == \
        ["P", "B", "B"]
    # The report on disk says the same as the returned one.
    on_disk = json.loads(next((store.root / "ingest").glob("*.json")).read_text())
    assert on_disk["files"][0]["warnings"] == [warning]


@pytest.mark.parametrize(("header", "player", "banker"), [
    ("Cards B,Cards P", "Cards P", "Cards B"),  # the side's letter, whatever the order
    ("bankerHnd,playerHnd", "playerHnd", "bankerHnd"),
    ("庄家手牌,闲家手牌", "闲家手牌", "庄家手牌"),
    ("Рука банкира 1,Рука 2", "Рука 2", "Рука банкира 1"),  # one named, the other left
])
def test_the_suggested_side_of_a_hand_column_follows_its_header(
        tmp_path: Path, header: str, player: str, banker: str) -> None:
    first, second = header.split(",")
    hands = {first: "5s 2c", second: "9h Kd"} if first == banker else \
        {first: "9h Kd", second: "5s 2c"}
    text = f"Table,Shoe,Coup,Result,{header}\nT1,S1,1,P,{hands[first]},{hands[second]}\n"
    _, report = _ingest(tmp_path, text)
    (warning,) = report["warnings"]
    quoted = [shlex.quote(f"{f}={c}") for f, c in (("player_cards", player),
                                                    ("banker_cards", banker))]
    assert f"--map {quoted[0]} --map {quoted[1]}" in warning


def test_columns_of_other_values_are_not_taken_for_hands(tmp_path: Path) -> None:
    text = ("Table,Shoe,Hand No,Result,Totals,Stamp,Note\n"
            "T1,S1,1,P,9 8,2026-03-01 20:00,Kd is lucky\nT1,S1,2,B,5 7,2026-03-01 20:01,\n")
    _, report = _ingest(tmp_path, text)
    assert report["ignored_columns"] == ["Totals", "Stamp", "Note"]
    assert report["warnings"] == []


def test_a_file_with_no_usable_column_names_the_likely_fields(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no outcome or card columns found .*did you mean "
                                         r"outcome\? use --map outcome=Resultat"):
        _ingest(tmp_path, "Tisch,Resultat\nT1,B\n")


def test_parquet_columns_outside_the_coup_fields_are_listed(tmp_path: Path) -> None:
    source = Store.create(tmp_path / "engine")
    write_simulation(Simulation(get_rules("standard-8"), shoes=2, seed=3), source)
    path = tmp_path / "coups.parquet"
    source.read.coups().with_columns(pl.lit("x").alias("dealer")).write_parquet(path)
    store = Store.create(tmp_path / "store")
    report = ingest([path], store, ReadOptions(), get_rules("standard-8")).report["files"][0]
    assert report["ignored_columns"] == ["source", "entry", "entered_by", "dealer"]
    assert report["columns"] == {f: f for f in FIELDS}


def test_the_command_lists_unread_columns_and_warns_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("Table,Shoe,Hand No,Result,Hand A,Hand B,Dealer\n"
                    "T1,S1,1,P,9h Kd,5s 2c,ana\n", encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "roads.cli", "ingest", str(path), "--store",
                           str(tmp_path / "store")], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "    columns not read: Hand A, Hand B, Dealer\n" in done.stdout
    assert "    did you mean player_cards? use --map 'player_cards=Hand A'\n" in done.stdout
    assert f"roads: warning: {path}: column(s) 'Hand A', 'Hand B' hold hands" in done.stderr
    as_json = subprocess.run([sys.executable, "-m", "roads.cli", "ingest", str(path),
                              "--store", str(tmp_path / "other"), "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert json.loads(as_json.stdout)["files"][0]["warnings"]
    assert "roads: warning:" in as_json.stderr
