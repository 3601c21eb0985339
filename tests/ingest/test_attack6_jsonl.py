"""A JSON line that is no coup (not an object, a payload that is null or text, an id that
is a number, brackets nested 100,000 deep, a flat row without "kind") is quarantined whole
with what is wrong, and the file's good lines are stored. Before, such lines gave
AttributeError, polars or RecursionError tracebacks, invalid JSON was quarantined as "no
table", and a flat row was skipped without a word ("0 rows read", exit 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.cli import main
from roads.ingest.jsonl import FORM
from roads.ingest.readers import ReadOptions, read
from roads.ingest.validate import validate
from roads.store import Store


def coup(payload: Any, table: Any = "T1", **more: Any) -> str:
    return json.dumps({"kind": "coup_entered", "table_id": table, "shoe_id": "S1",
                       "payload": payload, **more})


GOOD = coup({"coup": 1, "outcome": "P", "player_cards": ["9h", "Kd"],
             "banker_cards": ["5s", "2c"]})


def ingested(tmp_path: Path, lines: list[str]) -> tuple[int, dict[str, Any],
                                                        list[dict[str, Any]], Store]:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    store = tmp_path / "s"
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", str(store), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    rows = [json.loads(line) for f in (store / "quarantine").glob("*.jsonl")
            for line in f.read_text().splitlines()]
    return result.exit_code, json.loads(result.output)["files"][0], rows, Store.open(store)


@pytest.mark.parametrize(("line", "reason"), [
    ("[1]", f"a list, not a JSON object: {FORM}"),
    ('"x"', f"a string, not a JSON object: {FORM}"),
    ("5", f"a number, not a JSON object: {FORM}"),
    ('{"kind":', "invalid JSON: Expecting value"),
    ("[" * 100_000 + "]" * 100_000, "invalid JSON: nested too deeply"),
    (coup(None), "payload is null, not an object"),
    (coup("B"), "payload is a string, not an object"),
    (coup({"coup": 2, "outcome": "B"}, table=7), "table_id is a number, not text"),
    (coup({"coup": 2, "outcome": "B"}, table={"id": "T1"}), "table_id is an object, not text"),
    (coup({"coup": 2, "outcome": {"B": 1}}), "payload outcome is an object, not a value"),
    (coup({"coup": 2, "player_cards": 5}), "payload player_cards is a number, not a list of cards"),
    (coup({"coup": 2, "outcome": "\ud800"}),
     "text that is not Unicode (an unpaired surrogate escape such as \\ud800)"),
    ('{"kind": "coup_entered", "payload": {"coup": ' + "9" * 5000 + "}}",
     "invalid JSON: a number too long to read"),
    (json.dumps({"table_id": "T1", "shoe_id": "S1", "coup": 2, "outcome": "B"}),
     f'an object without "kind", not a journal event: {FORM}'),
    (json.dumps({"kind": "coup", "table_id": "T1"}),
     f"\"kind\" 'coup' is no journal event kind: {FORM}"),
], ids=["list", "string", "number", "invalid", "nested", "null-payload", "text-payload",
        "number-id", "object-id", "object-outcome", "number-hand", "surrogate", "long-number",
        "flat-row", "unknown-kind"])
def test_a_line_that_is_no_coup_is_quarantined_with_what_is_wrong(
        tmp_path: Path, line: str, reason: str) -> None:
    code, report, rows, store = ingested(tmp_path, [GOOD, line])
    assert code == 1
    assert (report["accepted"], report["quarantined"]) == (1, 1)
    assert report["quarantined_by_reason"] == {reason: 1}
    [row] = rows
    assert (row["row"], row["field"], row["reason"]) == (2, "line", reason)
    assert json.loads(row["raw"]) == {"line": 2, "text": line}
    coups = store.read.coups()
    assert coups.select("table_id", "shoe_id", "coup", "outcome").rows() == [
        ("T1", "S1", 1, "P")]
    assert coups["player_cards"].to_list() == [["9h", "Kd"]]


def test_other_events_and_redacted_links_are_passed_over_and_text_hands_read(
        tmp_path: Path) -> None:
    lines = [json.dumps({"kind": "shoe_opened", "table_id": "T1", "shoe_id": "S1",
                         "payload": {"rules": "standard-8"}}),
             json.dumps({"seq": 2, "table_id": "T9", "shoe_id": "S", "body_sha256": "0" * 64,
                         "prev_hash": "1" * 64, "hash": "2" * 64, "redacted": True}),
             GOOD, coup({"coup": 2, "player_cards": "2s 8h", "banker_cards": "3s 6c"})]
    code, report, rows, store = ingested(tmp_path, lines)
    assert code == 0 and rows == [] and report["accepted"] == 2
    coups = store.read.coups()
    assert coups["outcome"].to_list() == ["P", "B"]
    assert coups["banker_cards"].to_list() == [["5s", "2c"], ["3s", "6c"]]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
FIELD_NAMES = st.sampled_from(["coup", "outcome", "player_cards", "banker_cards",
                               "player_total", "banker_total", "natural", "player_pair",
                               "banker_pair", "dealt_at"])
COUP_LINES = st.one_of(
    JSON.map(coup),
    JSON.map(lambda table: coup({"coup": 1, "outcome": "B"}, table=table)),
    st.dictionaries(FIELD_NAMES, JSON, max_size=4).map(coup),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(COUP_LINES, min_size=1, max_size=6), st.lists(JSON, max_size=3))
def test_any_json_on_a_line_is_stored_quarantined_or_passed_over(
        tmp_path_factory: pytest.TempPathFactory, coups: list[str], values: list[Any]) -> None:
    path = tmp_path_factory.mktemp("j") / "any.jsonl"
    path.write_text("".join(line + "\n" for line in [*coups, *map(json.dumps, values)]))
    checked = validate(read(path, ReadOptions()), 8)
    # every coup_entered line is a stored coup, a quarantined row or a repeat of a coup
    stored = checked.coups.height + checked.duplicates
    quarantined = checked.quarantine.filter(checked.quarantine["row"] <= len(coups))
    assert stored + quarantined.height == len(coups)
    assert checked.quarantine["reason"].null_count() == 0
    assert checked.quarantine["row"].is_between(1, len(coups) + len(values)).all()
