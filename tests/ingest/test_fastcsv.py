"""The clean-CSV front end gives what the general reader gives, or steps aside.

Files are built from field values a casino export might hold — plain ones (which the fast
path must take, including rows it must quarantine or flag) and awkward ones (which may send
the file to the general path). Whenever the fast path answers, its coups, flags and
quarantine must equal the general path's on the same file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from roads.ingest.fastcsv import parse_csv
from roads.ingest.readers import ReadOptions, read
from roads.ingest.run import ingest, shoe_totals
from roads.ingest.validate import Validated, check, parse_staged
from roads.rules import get_rules
from roads.store import Store

# Values the fast path reads itself (including ones that are quarantined or flagged) ...
PLAIN = {
    "Table": ["T1", "T1", "T2", " T1", "", "  "],
    "Shoe": ["S1", "S1", "S2", "S3", ""],
    "Hand": ["1", "2", "3", "07", " 4", "2"],
    "Player Cards": ["9h 4s", "Kd 5c 2h", "9 4", "9h", "", "Xx 4s", "10h 5c", "ah KS", "5h 5d",
                     "2c 3d", "As As"],
    "Banker Cards": ["7s Qd", "3h 3c 9s", "6 2", "", "Kd Kh", "5c 5h 5d 5s"],
    "Result": ["Banker", "P", "t", "tie", "", "x", " B ", "PLAYER", "banker win"],
    "Player Total": ["", "5", " 7", "100", "0"],
    "Banker Total": ["", "8", "3"],
    "Natural": ["", "true", "N", "yes", "maybe"],
}
# Each file writes its times in one layout (the fast path reads these) ...
LAYOUTS = ["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%S.{ms}Z",
           "%Y-%m-%dT%H:%M:%S+05:30", "%Y-%m-%dT%H:%M:%S.%f-08:00", "%Y-%m-%d %H:%M:%S",
           "%Y-%m-%d %H:%M:%S+01:00", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S.%f"]
# ... and values that may send the whole file to the general path.
AWKWARD = {
    "Hand": ["", "x", "+3", "-1", "99999999999"],
    "Player Total": ["x", "+5"],
    "Time": ["2026-01-01 00:00:00Z", "garbage", "2026-02-30T00:00:00Z", "01/02/2026 10:00:00",
             "2026-01-01T00:00:00.5Z", "2026-01-01T01:00:00+05:30", "2026-01-01 00:00:00",
             "2026-01-01T00:00:00.1234567Z"],
}
STRUCTURAL = {"Table": ['"T1"', "Tisch-ü"], "Result": ["庄", "Банк"]}


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, ReadOptions]:
    awkward = draw(st.booleans())
    structural = draw(st.integers(0, 4)) == 0
    layout = draw(st.sampled_from(LAYOUTS))
    start = datetime(2024, 2, 28, 22, tzinfo=UTC)
    columns = [c for c in [*PLAIN, "Time"]
               if c not in ("Natural", "Player Total", "Banker Total", "Time")
               or draw(st.booleans())]
    sep = draw(st.sampled_from([",", ";", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    rows = []
    for _ in range(draw(st.integers(1, 25))):
        row = []
        for column in columns:
            values = PLAIN.get(column, []) + (AWKWARD.get(column, []) if awkward else []) \
                + (STRUCTURAL.get(column, []) if structural else [])
            if column == "Time":
                at = start + timedelta(seconds=draw(st.integers(0, 3 * 86400)),
                                       microseconds=draw(st.integers(0, 999_999)))
                values = [*values, "", at.strftime(layout.replace(
                    "{ms}", f"{at.microsecond // 1000:03d}"))]
            row.append(draw(st.sampled_from(values)))
        rows.append(sep.join(row))
    if draw(st.booleans()):  # an export sorted shoe by shoe
        rows.sort()
    text = newline.join([sep.join(columns), *rows]) + (newline if draw(st.booleans()) else "")
    bom = "\ufeff" if draw(st.booleans()) else ""
    default = draw(st.sampled_from([None, "T9"]))
    return (bom + text).encode(), ReadOptions(table_id=default)


def _totals_hold(checked: Validated) -> None:
    """The shoe totals counted in the check's pass equal a group-by over its coups."""
    keys = ["table_id", "shoe_id"]
    assert_frame_equal(checked.shoes.sort(keys), shoe_totals(checked.coups).sort(keys))


def _same(fast: Validated, general: Validated) -> None:
    _totals_hold(fast)
    _totals_hold(general)
    assert_frame_equal(fast.coups, general.coups)
    order = ["row", "rule", "message", "coup"]
    assert_frame_equal(fast.flags.sort(order, nulls_last=True),
                       general.flags.sort(order, nulls_last=True))
    assert_frame_equal(fast.quarantine.drop("raw").sort("row", "reason"),
                       general.quarantine.drop("raw").sort("row", "reason"))
    assert fast.duplicates == general.duplicates


@settings(max_examples=300, deadline=None)
@given(csv_files())
def test_fast_path_equals_the_general_path(tmp_path_factory: pytest.TempPathFactory,
                                           case: tuple[bytes, ReadOptions]) -> None:
    content, options = case
    path = tmp_path_factory.mktemp("csv") / "export.csv"
    path.write_bytes(content)
    attempt = parse_csv(path, options)
    event("fast path" if attempt.parsed is not None else f"general path: {attempt.why}")
    general = parse_staged(read(path, options))
    if attempt.parsed is None:
        _totals_hold(check(general, 8))
        return
    assert attempt.parsed.rows.height == general.rows.height
    _same(check(attempt.parsed, 8), check(general, 8))


def test_plain_exports_take_the_fast_path_and_awkward_ones_do_not(tmp_path: Path) -> None:
    header = "Table,Shoe,Hand,Player Cards,Banker Cards,Result,Time\n"
    plain = header + "T1,S1,1,9h 4s,7s Qd,Banker,2026-01-01T00:00:00Z\n" \
                     "T1,S1,2,Xx,7s,Banker,2026-01-01T00:00:30Z\n"  # quarantined, still fast
    cases = {
        "plain.csv": (plain, None),
        "crlf.csv": (plain.replace("\n", "\r\n"), None),
        "quoted.csv": (header + 'T1,S1,1,"9h,4s",7s Qd,B,\n', "a quoted field"),
        "chinese.csv": (header + "T1,S1,1,9h 4s,7s Qd,庄,\n", "a non-ASCII byte"),
        "ragged.csv": (header + "T1,S1,1,9h 4s\n", "a line with another number of fields"),
        "blank.csv": (header + "T1,S1,1,9h 4s,7s Qd,B,\n\nT1,S1,2,9h 4s,7s Qd,B,\n",
                      "an empty line"),
        "signed.csv": (header + "T1,S1,+1,9h 4s,7s Qd,B,\n",
                       "a coup number that is not plain digits"),
        "mixed.csv": (header + "T1,S1,1,9h 4s,7s Qd,B,2026-01-01T00:00:00Z\n"
                      "T1,S1,2,9h 4s,7s Qd,B,2026-01-01T00:00:00+01:00\n",
                      "timestamps in more than one layout"),
    }
    for name, (text, why) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        attempt = parse_csv(path, ReadOptions())
        assert attempt.why == why, name
        assert (attempt.parsed is None) == (why is not None), name


def test_ingest_reports_and_quarantines_alike_on_both_paths(tmp_path: Path) -> None:
    """The whole run (report, quarantine kept verbatim) does not depend on the path taken."""
    rows = ["T1,S1,1,9h 4s,7s Qd,Banker,2026-01-01T00:00:00Z",
            "T1,S1,2,Xx 4s,7s Qd,Banker,2026-01-01T00:00:30Z",
            "T1,S1,3,9h 4s,7s Qd,Huh,2026-01-01T00:01:00Z",
            "T1,S1,5,9h 4s,7s Qd,Player,2026-01-01T00:01:30Z"]
    header = "Table,Shoe,Hand,Player Cards,Banker Cards,Result,Time"
    fast = tmp_path / "fast.csv"
    fast.write_text("\n".join([header, *rows]) + "\n")
    slow = tmp_path / "slow.csv"  # one quoted field sends this one down the general path
    slow.write_text("\n".join([header, *rows]).replace("Banker,2026-01-01T00:00:00Z",
                                                       '"Banker",2026-01-01T00:00:00Z') + "\n")
    assert parse_csv(fast, ReadOptions()).parsed is not None
    assert parse_csv(slow, ReadOptions()).parsed is None
    reports = []
    for path in (fast, slow):
        result = ingest([path], Store.create(tmp_path / path.stem), ReadOptions(),
                        get_rules("standard-8"))
        report = result.report["files"][0]
        assert report["parser"] == ("plain CSV" if path == fast else "general (a quoted field)")
        quarantine = pl.read_ndjson(next((tmp_path / path.stem / "quarantine").glob("*.jsonl")))
        reports.append(({k: report[k] for k in ("rows_read", "accepted", "quarantined",
                                                "quarantined_by_reason", "flags_by_rule")},
                        quarantine.select("row", "field", "reason", "raw").sort("row").rows()))
    assert reports[0] == reports[1]
    assert reports[0][0]["quarantined"] == 2
    assert reports[0][1][0][3] == ('{"Table":"T1","Shoe":"S1","Hand":"2","Player Cards":'
                                   '"Xx 4s","Banker Cards":"7s Qd","Result":"Banker",'
                                   '"Time":"2026-01-01T00:00:30Z"}')


def test_a_file_of_many_chunks_reads_as_the_general_path_does(tmp_path: Path) -> None:
    """Several MiB: the file is split on line starts into chunks parsed side by side, and
    shoes run across chunk bounds; a few rows are quarantined or flagged on the way."""
    cards = ["9h 4s", "Kd 5c 2h", "2c 3d", "As As", "Xx 4s", "5h 5d"]
    results = ["Banker", "P", "tie", "Huh"]
    lines = ["Table;Shoe;Hand;Player Cards;Banker Cards;Result;Player Total;Time"]
    start = datetime(2026, 5, 1, tzinfo=UTC)
    for i in range(80_000):
        shoe, coup = divmod(i, 83)
        at = start + timedelta(seconds=30 * i)
        lines.append(f"T{shoe % 3};S{shoe};{coup + 1};{cards[i % 6]};{cards[(i * 7) % 5]};"
                     f"{results[i % 4] if i % 997 else 'Huh'};{i % 10};"
                     f"{at:%Y-%m-%d %H:%M:%S}")
    path = tmp_path / "big.csv"
    path.write_text("\r\n".join(lines) + "\r\n")
    assert path.stat().st_size > 3 << 20
    attempt = parse_csv(path, ReadOptions())
    assert attempt.parsed is not None and attempt.parsed.starts is not None
    assert int(attempt.parsed.starts.sum()) == -(-80_000 // 83)  # one run per shoe
    fast, general = check(attempt.parsed, 8), check(parse_staged(read(path, ReadOptions())), 8)
    _same(fast, general)
    assert fast.coups.height > 30_000 and fast.quarantine.height > 0 and fast.flags.height > 0
