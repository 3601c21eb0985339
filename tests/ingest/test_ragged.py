"""A CSV line with more or fewer fields than its header is quarantined whole, on every path.

The walk that finds such lines is held to Python's ``csv`` module (an independent reader of
the same RFC 4180 rules) on generated files with quoted separators, quoted line ends, doubled
quotes, CR LF line ends and blank lines, read in blocks and record batches small enough to
cut every line; the ingest tests run a file through each reader path (the plain file the fast
path hands over, quoted fields, whole and in chunks) and read the quarantine back.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roads.ingest import chunks, ragged
from roads.ingest.ragged import RAGGED, RAGGED_FIELD, ragged_rows
from roads.ingest.readers import ReadOptions, staged_batches
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store

_PLAIN = st.text(alphabet="ab 9,;\t", max_size=4).map(lambda t: t.replace(",", ""))
_QUOTED = st.text(alphabet='ab,\n"\r ', max_size=5).map(
    lambda t: '"' + t.replace('"', '""') + '"')


@st.composite
def ragged_files(draw: st.DrawFn) -> tuple[str, str]:
    """(file text, line end): a header and rows of one to five fields, some blank lines."""
    end = draw(st.sampled_from(["\n", "\r\n"]))
    width = draw(st.integers(1, 4))
    lines = [",".join(f"h{i}" for i in range(width))]
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 9)) == 0:
            lines.append("")
            continue
        count = draw(st.sampled_from([width, width, 1, 2, 3, 5]))
        fields = [draw(st.one_of(_PLAIN, _QUOTED)) for _ in range(count)]
        if fields == [""]:
            fields = ["x"]  # (one empty field is a blank line)
        lines.append(",".join(fields))
    text = end.join(lines)
    return text + (end if draw(st.booleans()) else ""), end


def _oracle(text: str) -> dict[int, int]:
    """Data row -> field count, for rows whose count is not the header's (``csv``)."""
    records = list(csv.reader(io.StringIO(text, newline="")))
    width = len(records[0])
    return {row: len(r) for row, r in enumerate(records[1:], start=1)
            if r and len(r) != width}


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ragged_files(), st.sampled_from([(1 << 20, 4096), (3, 1), (7, 2)]))
def test_ragged_rows_are_the_rows_csv_reads_with_another_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drawn: tuple[str, str],
        sizes: tuple[int, int]) -> None:
    text, _ = drawn
    monkeypatch.setattr(ragged, "BLOCK_BYTES", sizes[0])
    monkeypatch.setattr(ragged, "_BATCH", sizes[1])
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode())
    found = ragged_rows(path, ",")
    assert {r: g.fields for r, g in found.items()} == _oracle(text)
    rows = pl.read_csv(path, infer_schema=False, truncate_ragged_lines=True).height
    assert all(r <= rows for r in found)  # (the readers number the same rows)
    records = list(csv.reader(io.StringIO(text, newline="")))
    for g in found.values():  # the text is the row as written, and begins on its line
        assert next(csv.reader(io.StringIO(g.text + "\n", newline=""))) == \
            records[g.row]
        assert text.encode().split(b"\n")[g.line - 1].decode().startswith(g.text.split("\n")[0])


HEADER = "Table,Shoe,Hand,Player Cards,Banker Cards,Result,Time"


def _row(coup: int, quoted: bool) -> str:
    cards = ('"9h 4s"', '"7s Qd"') if quoted else ("9h 4s", "7s Qd")
    return f"T1,S1,{coup},{cards[0]},{cards[1]},Banker,2026-01-01T00:{coup:02d}:00Z"


@pytest.mark.parametrize("quoted", [False, True], ids=["plain", "quoted"])
@pytest.mark.parametrize("chunk", [None, 256], ids=["whole", "chunked"])
def test_a_ragged_line_is_quarantined_whole_on_every_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quoted: bool, chunk: int | None
        ) -> None:
    if chunk is not None:
        monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
    lines = [_row(c, quoted) for c in range(1, 21)]
    longer, shorter = lines[4] + ",extra,more", ",".join(lines[11].split(",")[:4])
    lines[4], lines[11] = longer, shorter
    path = tmp_path / "export.csv"
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    store = Store.create(tmp_path / "store")
    result = ingest([path], store, ReadOptions(), get_rules("standard-8"))
    file = result.report["files"][0]
    assert file["parser"].startswith("general")
    assert file["rows_read"] == 20 and file["accepted"] == 18
    rows = [json.loads(line) for line in (store.root / "quarantine").glob("*.jsonl")
            .__next__().read_text().splitlines()]
    assert [(r["row"], r["field"], r["reason"]) for r in rows] == [
        (5, RAGGED_FIELD, "a line of 9 fields; the header has 7 (the line is kept whole, "
                          "nothing of it stored)"),
        (12, RAGGED_FIELD, "a line of 4 fields; the header has 7 (the line is kept whole, "
                           "nothing of it stored)")]
    assert [json.loads(r["raw"]) for r in rows] == [{"line": 6, "text": longer},
                                                    {"line": 13, "text": shorter}]
    stored = store.read.coups()["coup"].sort().to_list()
    assert stored == [c for c in range(1, 21) if c not in (5, 12)]


def test_a_file_without_ragged_lines_reads_as_before(tmp_path: Path) -> None:
    """No column is added and nothing is quarantined when every line has the header's count
    (a quoted field holding the separator and a line end is one field)."""
    path = tmp_path / "export.csv"
    path.write_text(HEADER + '\nT1,S1,1,"9h,4s",7s Qd,Banker,"2026-01-01\nT00:00:00Z"\n',
                    encoding="utf-8")
    assert ragged_rows(path, ",") == {}


def _all_ragged(tmp_path: Path, coups: int) -> tuple[Path, list[str]]:
    """A file whose header is one column short, so that every row is ragged."""
    lines = [_row(c, quoted=True) for c in range(1, coups + 1)]
    path = tmp_path / "export.csv"
    path.write_text("\n".join([HEADER.rsplit(",", 1)[0], *lines]) + "\n", encoding="utf-8")
    return path, lines


def test_a_file_whose_every_row_is_ragged_is_quarantined_whole_across_many_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of three rows, a walk of two rows a call over blocks of 64 bytes: every row
    is quarantined once, with its own line and text, and nothing is stored."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 256)
    monkeypatch.setattr(ragged, "BLOCK_BYTES", 64)
    monkeypatch.setattr(ragged, "_BATCH", 2)
    path, lines = _all_ragged(tmp_path, 40)
    store = Store.create(tmp_path / "store")
    result = ingest([path], store, ReadOptions(), get_rules("standard-8"))
    file = result.report["files"][0]
    assert file["rows_read"] == 40 and file["accepted"] == 0
    rows = [json.loads(line) for line in (store.root / "quarantine").glob("*.jsonl")
            .__next__().read_text().splitlines()]
    reason = "a line of 7 fields; the header has 6 (the line is kept whole, nothing of it " \
             "stored)"
    assert [(r["row"], r["field"], r["reason"]) for r in rows] == \
        [(c, RAGGED_FIELD, reason) for c in range(1, 41)]
    assert [json.loads(r["raw"]) for r in rows] == \
        [{"line": c + 1, "text": lines[c - 1]} for c in range(1, 41)]
    assert store.read.coups().height == 0


def test_a_batch_holds_only_its_own_ragged_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory held per batch does not grow with the file: a ragged row's text is read when
    its batch is marked, not before, and the walk holds at most one call's records ahead."""
    monkeypatch.setattr(ragged, "BLOCK_BYTES", 64)
    monkeypatch.setattr(ragged, "_BATCH", 4)
    path, _ = _all_ragged(tmp_path, 50)
    made: list[int] = []
    real = ragged.Ragged

    def counted(row: int, *rest: object) -> ragged.Ragged:
        made.append(row)
        return real(row, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(ragged, "Ragged", counted)
    seen = 0
    for batch in staged_batches(path, ReadOptions(), 5):
        seen += batch.height
        assert batch[RAGGED].is_not_null().all()
        assert made == list(range(1, seen + 1))  # (each text read once, with its batch)
    assert seen == 50
    found = ragged.RaggedRows(path, ",")
    for last in range(3, 53, 3):
        got = found.through(last)
        assert [g.row for g in got] == list(range(last - 2, min(last, 50) + 1))
        assert found.pending <= 4
