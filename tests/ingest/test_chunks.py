"""A file read in chunks gives what it gives read whole: the same stored coups and shoe rows,
flags, quarantine (row numbers and verbatim rows included) and report numbers.

The dirty file has bad rows, an identical and a differing repeat, a coup that conflicts with
a stored one, coups of a live shoe, shoes that span many chunks and, ordered by time, tables
interleaved; it is ingested once whole and once cut into chunks of a few rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roads.errors import InputError
from roads.ingest import chunks
from roads.ingest.readers import ReadOptions
from roads.ingest.run import CONFLICT, LIVE_SHOE, ingest
from roads.rules import get_rules
from roads.schema import shoe_runs
from roads.simulate import Simulation, write_simulation
from roads.store import SPILL, Store
from roads.store.digest import coups_digest, shoe_digests, shoes_digest
from roads.store.verify import verify
from tests.floor import Floor
from tests.ingest.test_crash import assert_complete

COLUMNS = ("table_id", "shoe_id", "coup", "outcome", "player_cards", "banker_cards",
           "player_total", "banker_total", "dealt_at")


@pytest.fixture(scope="module")
def dealt(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """About 1,000 coups of 12 shoes over 3 tables, as text fields."""
    sim = Store.create(tmp_path_factory.mktemp("sim") / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=12, seed=3, tables=3), sim)
    return sim.read.coups().select(
        "table_id", "shoe_id", pl.col("coup").cast(pl.String),
        pl.col("outcome").cast(pl.String),
        *(pl.col(c).cast(pl.List(pl.String)).list.join(" ") for c in ("player_cards",
                                                                       "banker_cards")),
        pl.col("player_total").cast(pl.String), pl.col("banker_total").cast(pl.String),
        pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ"))


def _dirty(dealt: pl.DataFrame, by_time: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the rows stored before the run: one shoe; the dirty file's rows)."""
    first = dealt.row(0, named=True)
    stored = dealt.filter(pl.col("shoe_id") == first["shoe_id"],
                          pl.col("table_id") == first["table_id"])
    rows = dealt.with_columns(  # a wrong total (flagged) and a conflict with the stored shoe
        pl.when(pl.col("coup") == "5").then(pl.lit("9")).otherwise("player_total")
        .alias("player_total"),
        pl.when((pl.col("shoe_id") == first["shoe_id"]) & (pl.col("coup") == "2")
                & (pl.col("table_id") == first["table_id"]))
        .then(pl.lit("T")).otherwise("outcome").alias("outcome"))
    extra = pl.DataFrame([
        ("LIVE", "L1", "1", "B", "", "", "", "", "2026-01-01T00:00:00Z"),  # a live shoe
        (first["table_id"], "", "1", "P", "", "", "", "", ""),  # no shoe
        ("X1", "Y1", "1", "maybe", "", "", "", "", ""),  # an unknown outcome
        ("X1", "Y1", "2", "", "9h Zz", "5s 2c", "", "", ""),  # an unreadable card
        ("X1", "Y1", "3", "P", "", "", "", "", "2026-01-01T00:00:00Z"),
        ("X1", "Y1", "3", "P", "", "", "", "", "2026-01-01T00:00:00Z"),  # identical repeat
        ("X1", "Y1", "3", "B", "", "", "", "", "2026-01-01T00:00:00Z"),  # differing repeat
        ("X1", "Y1", "5", "T", "", "", "", "", "2026-01-01T00:00:02Z"),  # a numbering gap
    ], schema=list(COLUMNS), orient="row")
    rows = pl.concat([rows.head(300), extra, rows.slice(300)])
    if by_time:
        rows = rows.sort("dealt_at", maintain_order=True, nulls_last=False)
    return stored, rows


def _write(rows: pl.DataFrame, path: Path, kind: str) -> Path:
    if kind == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for r in rows.iter_rows(named=True):
                payload = {k: r[k].split() if k.endswith("_cards") and r[k] else r[k] or None
                           for k in COLUMNS[2:]}
                fh.write(json.dumps({"kind": "coup_entered", "table_id": r["table_id"],
                                     "shoe_id": r["shoe_id"] or None, "payload": payload}) + "\n")
        return path
    rows = rows.with_columns(pl.col(c).replace("", None) for c in COLUMNS)  # (not `""`)
    rows.write_csv(path, quote_style="non_numeric" if kind == "quoted" else "necessary")
    if kind == "late quote":  # plain until a quoted field near the end
        lines = path.read_text().splitlines(keepends=True)
        lines[-3] = '"' + lines[-3].replace(",", '",', 1)
        path.write_text("".join(lines))
    return path


def _store(root: Path, stored: pl.DataFrame) -> Store:
    """A store holding one shoe already and a live shoe at table LIVE."""
    floor = Floor(root)
    _write(stored, root.parent / f"{root.name}-stored.csv", "plain")
    ingest([root.parent / f"{root.name}-stored.csv"], floor.store, ReadOptions(),
           get_rules("standard-8"))
    floor.open_shoe("LIVE", "L1")
    floor.coup("LIVE", "B")
    return floor.store


def _outcome(store: Store, report: dict[str, Any]) -> dict[str, Any]:
    """Everything a run leaves that a reader sees, in an order that does not depend on how
    the run went through the file."""
    run = report["run"]
    quarantine = store.root / "quarantine" / f"{run}.jsonl"
    flags = store.root / "flags" / f"{run}.parquet"
    files = [{k: v for k, v in f.items()} for f in report["files"]]
    imported = pl.col("source") != "live"  # (the live shoe's times are the clock's)
    return {
        "coups": store.read.coups().filter(imported).sort("table_id", "shoe_id", "coup")
        .to_dicts(),
        "shoes": store.read.shoes().filter(imported).drop("open").sort("table_id", "shoe_id")
        .to_dicts(),
        "quarantine": sorted((q["row"] or 0, q["reason"], q["field"], q["raw"], q["file"])
                             for q in map(json.loads, quarantine.read_text().splitlines()))
        if quarantine.exists() else [],
        "flags": pl.read_parquet(flags).sort(pl.all()).to_dicts() if flags.exists() else [],
        "files": files, "totals": report["totals"],
    }


def _both(tmp_path: Path, dealt: pl.DataFrame, kind: str, by_time: bool, chunk: int,
          replace: bool = False, monkeypatch: pytest.MonkeyPatch | None = None
          ) -> tuple[dict[str, Any], dict[str, Any], Path]:
    stored, rows = _dirty(dealt, by_time)
    source = _write(rows, tmp_path / f"export.{'jsonl' if kind == 'jsonl' else 'csv'}", kind)
    outcomes = []
    for name, size in (("whole", 1 << 30), ("chunked", chunk)):
        store = _store(tmp_path / name, stored)
        assert monkeypatch is not None
        monkeypatch.setattr(chunks, "CHUNK_BYTES", size)
        result = ingest([source], store, ReadOptions(), get_rules("standard-8"),
                        replace=replace)
        outcomes.append(_outcome(store, result.report))
        assert not (store.root / SPILL).exists()  # a run leaves no spill
    assert source.stat().st_size > 20 * chunk  # many chunks, shoes across their bounds
    return outcomes[0], outcomes[1], source


@pytest.mark.parametrize(("kind", "by_time"), [("plain", True), ("plain", False),
                                               ("quoted", True), ("late quote", False),
                                               ("jsonl", True)])
def test_a_dirty_file_read_in_chunks_gives_what_it_gives_whole(
        tmp_path: Path, dealt: pl.DataFrame, kind: str, by_time: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    whole, chunked, _ = _both(tmp_path, dealt, kind, by_time, 2048, monkeypatch=monkeypatch)
    assert chunked == whole
    f = whole["files"][0]
    # The file is as dirty as it means to be (so the equality above compares something).
    assert f["parser"] == {"plain": "plain CSV", "jsonl": "general",
                           "late quote": "general (a quoted field)",
                           "quoted": "general (a quoted, blank or repeated column name)"}[kind]
    assert f["duplicate_rows"] == 1 and f["conflicts"] == 2 and f["already_stored"] > 50
    reasons = f["quarantined_by_reason"]
    assert reasons[CONFLICT] == 1 and reasons[LIVE_SHOE] == 1
    assert reasons["duplicate coup number with different content"] == 1
    assert reasons["unknown outcome label"] == 1 and reasons["no shoe (give a shoe column " \
        "or --shoe)"] == 1
    assert {"total", "numbering"} <= set(f["flags_by_rule"])
    if kind != "jsonl":  # CSV rows are quarantined verbatim, by their row number
        rows = {q[0] for q in whole["quarantine"] if q[0]}
        assert all(r > 0 for r in rows) and len(rows) == f["quarantined"] - 2


def test_a_re_import_with_replace_amends_the_same_in_chunks(
        tmp_path: Path, dealt: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, chunked, _ = _both(tmp_path, dealt, "plain", True, 2048, replace=True,
                              monkeypatch=monkeypatch)
    assert chunked == whole
    assert whole["totals"]["replaced"] == 1


def test_shoe_lines_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(("BPPTB" * 15)[: 40 + i % 30] + ("\n" if i % 7 else "X\n")
                   for i in range(200))
    source = tmp_path / "shoes.txt"
    source.write_text(text)
    outcomes = []
    for name, size in (("whole", 1 << 30), ("chunked", 1024)):
        monkeypatch.setattr(chunks, "CHUNK_BYTES", size)
        store = Store.create(tmp_path / name)
        outcomes.append(_outcome(store, ingest([source], store, ReadOptions(),
                                               get_rules("standard-8")).report))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0]["totals"]["quarantined"] == 29  # every seventh line, kept whole


@settings(max_examples=6, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(chunk=st.integers(min_value=200, max_value=40_000))
def test_any_chunk_size_stores_the_same(tmp_path: Path, dealt: pl.DataFrame, chunk: int,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    stored, rows = _dirty(dealt, True)
    source = _write(rows, tmp_path / f"c{chunk}.csv", "plain")
    outcomes = []
    for name, size in (("whole", 1 << 30), ("chunked", chunk)):
        monkeypatch.setattr(chunks, "CHUNK_BYTES", size)
        store = _store(tmp_path / f"{name}{chunk}", stored)
        outcomes.append(_outcome(store, ingest([source], store, ReadOptions(),
                                               get_rules("standard-8")).report))
    assert outcomes[1] == outcomes[0]


@settings(max_examples=60, deadline=None)
@given(shoes=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 5),
                                st.one_of(st.none(), st.integers(0, 4)), st.booleans()),
                      min_size=1, max_size=25),
       cut=st.integers(0, 60))
def test_keys_found_once_per_shoe_run_are_the_keys_found_row_by_row(
        shoes: list[tuple[int, int, int | None, bool]], cut: int) -> None:
    """Two chunks of shoes, each shoe one run of rows (possibly across the cut, possibly
    past midnight or undated): the keys found run by run (the front end's shoe runs) are the
    keys found row by row, the second chunk's shoes of the first keeping theirs."""
    rows = []
    for number, (table, length, day, late) in enumerate(shoes):
        for i in range(length):
            at = None if day is None else datetime(2026, 1, 1 + day, 23 if late else 9, 59,
                                                   tzinfo=UTC) + timedelta(minutes=i)
            rows.append((f"T{table}", f"S{number}", at))
    frame = pl.DataFrame(rows, schema={"table_id": pl.String, "shoe_id": pl.String,
                                       "~dealt_at": pl.Datetime("us", "UTC")}, orient="row")
    cut = min(cut, frame.height)
    found = []
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "file.csv"
        source.write_text("x")
        for number, by_runs in enumerate((True, False)):
            spill = chunks.Spill(Path(work), "run", number, source)
            keys = []
            for part in (frame.head(cut), frame.slice(cut)):
                ids = part.select(pl.struct("table_id", "shoe_id").rle_id()).to_series()
                starts = np.diff(ids.to_numpy(), prepend=-1) != 0 if by_runs else None
                keys += spill._keys(part, starts).to_list()
            found.append(keys)
    assert found[0] == found[1]
    assert len(found[0]) == frame.height


@settings(max_examples=12, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(chunk=st.integers(min_value=300, max_value=20_000), back=st.booleans(),
       seed=st.integers(0, 1000))
def test_a_buckets_shoe_runs_are_the_runs_its_rows_show(
        tmp_path: Path, dealt: pl.DataFrame, monkeypatch: pytest.MonkeyPatch, chunk: int,
        back: bool, seed: int) -> None:
    """A file listed shoe by shoe (shoes across chunk ends; ``back``: one shoe's last coups
    moved to the end of the file, so it comes back in a later chunk), spilled in chunks:
    each bucket's runs, from the front end's flags and the pieces' ends, are what comparing
    its rows gives (:func:`roads.schema.shoe_runs`), and the runs are found in every bucket
    unless a shoe comes back."""
    rows = dealt.sample(fraction=1.0, shuffle=True, seed=seed).sort(
        "table_id", "shoe_id", pl.col("coup").cast(pl.Int32), maintain_order=True)
    if back:
        tail = rows.filter(pl.col("shoe_id") == rows["shoe_id"][0]).tail(5)
        rows = pl.concat([rows.join(tail, on=list(COLUMNS), how="anti"), tail])
    source = _write(rows, tmp_path / f"f{chunk}-{back}-{seed}.csv", "plain")
    monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
    spill = chunks.Spill(tmp_path, f"run{chunk}-{back}-{seed}", 0, source)
    with ThreadPoolExecutor(max_workers=1) as hasher:
        assert chunks.spill_file("csv", ReadOptions(), spill, hasher)[0] == "plain CSV"
    found = [(bucket.starts, shoe_runs(bucket.rows)) for bucket in spill]
    assert len(found) > 1
    for ours, oracle in found:
        assert (ours is None) == (oracle is None) or (back and ours is None)
        if ours is not None:
            assert oracle is not None and np.array_equal(ours, oracle)
    assert back or all(ours is not None for ours, _ in found)


RUN = """
import sys
from pathlib import Path
from roads.errors import InputError
from roads.ingest import chunks
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import SPILL, Store
chunks.CHUNK_BYTES = int(sys.argv[2])
ingest([Path(p) for p in sys.argv[3:]], Store.create(Path(sys.argv[1])), ReadOptions(),
       get_rules("standard-8"))
"""

#: Kill points inside the chunk stages (``after``: let the point pass this often first).
KILLS = [("ingest:spilled", 0), ("ingest:spilled", 12), ("ingest:bucket-stored", 0),
         ("ingest:bucket-stored", 2), ("ingest:parts-written", 3), ("store:part-written", 4)]


@pytest.mark.parametrize(("at", "after"), KILLS)
def test_a_kill_inside_a_chunk_stage_leaves_nothing_visible_and_a_rerun_completes(
        tmp_path: Path, dealt: pl.DataFrame, at: str, after: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = _write(dealt.sort("dealt_at"), tmp_path / "export.csv", "plain")  # interleaved
    bad = tmp_path / "bad.csv"  # a second, small input with a row to quarantine
    bad.write_text("table,shoe,coup,result\nX1,Y1,1,B\nX1,Y1,2,maybe\n")
    root = tmp_path / "store"
    env = {**os.environ, "ROADS_KILL_AT": at, "ROADS_KILL_AFTER": str(after)}
    done = subprocess.run([sys.executable, "-c", RUN, str(root), "2048", str(source),
                           str(bad)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == -9, done.stderr  # SIGKILL, inside the stage
    store = Store.open(root)
    # Partial state: nothing of the run is visible; what it left is named, spill included.
    assert store.read.coups().is_empty() and store.read.shoes().is_empty()
    assert store.journal.of_kinds(("import_committed",)) == []
    problems = verify(store).problems
    assert {p["kind"] for p in problems} == {"not accounted for"}, problems
    left = {p["where"] for p in problems}
    assert any(p.startswith(f"{SPILL}/") for p in left), left
    if at != "ingest:spilled":
        assert any(p.startswith("coups/") for p in left), left
    # Repaired state: the rerun stores every coup and shoe row once and sweeps the rest.
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2048)
    result = ingest([source, bad], store, ReadOptions(), get_rules("standard-8"))
    assert result.report["files"][0]["accepted"] == dealt.height
    assert left <= set(result.report["swept"])
    assert_complete(store, dealt)
    assert not any((root / SPILL).rglob("*.arrow"))


ALTER_SPILL = """
import os, sys
from pathlib import Path
from roads.errors import InputError
from roads.ingest import chunks, run
from roads.ingest.readers import ReadOptions
from roads.rules import get_rules
from roads.store import SPILL, Store
root, how = Path(sys.argv[1]), sys.argv[2]
chunks.CHUNK_BYTES = 2048
def altered(name):  # once the file is spilled, before its buckets are read back
    if name == "ingest:parsed":
        first = sorted((root / SPILL).rglob("*.arrow"))[0]
        if how == "cut":
            os.truncate(first, first.stat().st_size // 2)
        elif how == "grown":
            with open(first, "ab") as fh:
                fh.write(b"x" * 4096)
        else:
            first.unlink()
run.point = altered
try:
    run.ingest([Path(sys.argv[3])], Store.create(root), ReadOptions(), get_rules("standard-8"))
except InputError as exc:
    print(exc)
    sys.exit(3)
"""


@pytest.mark.parametrize(("how", "found"), [("cut", "holds"), ("grown", "holds"),
                                            ("gone", "is gone")])
def test_a_spill_file_changed_in_size_mid_run_is_refused_not_a_crash(
        tmp_path: Path, dealt: pl.DataFrame, how: str, found: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A spill file cut short while the run goes on used to kill the process with SIGBUS
    when its mapped pages were read: now the run stops with one line naming the file,
    commits nothing, and the next run stores every coup (in a child process, so that a
    regression kills the child, not the test run)."""
    source = _write(dealt.sort("dealt_at"), tmp_path / "export.csv", "plain")
    root = tmp_path / "store"
    done = subprocess.run([sys.executable, "-c", ALTER_SPILL, str(root), how, str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 3, (done.returncode, done.stderr)
    line = done.stdout.strip()
    assert f"{SPILL}/" in line and ".arrow: this run's spill file " + found in line, line
    assert "nothing of this run was stored" in line
    store = Store.open(root)
    assert store.read.coups().is_empty()
    assert store.journal.of_kinds(("import_committed",)) == []
    assert not (root / SPILL).exists()  # the run removed its spill as it stopped
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2048)
    result = ingest([source], store, ReadOptions(), get_rules("standard-8"))
    assert result.report["files"][0]["accepted"] == dealt.height
    stored = store.read.coups()
    assert stored.height == stored.unique(["table_id", "shoe_id", "coup"]).height == dealt.height
    assert verify(store, deep=True).ok


def test_an_unusable_large_file_is_refused_and_leaves_no_spill(
        tmp_path: Path, dealt: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _write(dealt, tmp_path / "export.csv", "plain")
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2048)
    store = Store.create(tmp_path / "store")
    with pytest.raises(InputError, match="unknown format 'xml'"):
        ingest([source], store, ReadOptions(format="xml"), get_rules("standard-8"))
    assert not (store.root / SPILL).exists()
    assert store.read.coups().is_empty()


def _records(store: Store, run: str) -> list[dict[str, Any]]:
    """The run's journaled file records less what names the run: the run's id and a random
    suffix in each name, and the file's SHA-256 (its Parquet metadata holds the run's id)."""
    event, = store.journal.of_kinds(("import_committed",))
    return sorted(({**{k: v for k, v in f.items() if k != "sha256"},
                    "path": f["path"].replace(run, "RUN").rsplit("-", 1)[0]}
                   for f in event.payload["files"]), key=lambda f: str(f["path"]))


def test_two_chunk_sizes_and_two_runs_store_the_same_bytes(
        tmp_path: Path, dealt: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunk size and thread timing change neither the stored rows nor their digests; the
    same chunk size twice (spill and part writers on other threads) journals the same file
    records (names, content digests, sizes, rows)."""
    source = _write(_dirty(dealt, True)[1], tmp_path / "export.csv", "plain")
    seen: list[dict[str, Any]] = []
    for name, size in (("a", 3000), ("b", 3000), ("c", 11_000), ("whole", 1 << 30)):
        monkeypatch.setattr(chunks, "CHUNK_BYTES", size)
        store = Store.create(tmp_path / name)
        report = ingest([source], store, ReadOptions(), get_rules("standard-8")).report
        coups = store.read.coups().sort("table_id", "shoe_id", "coup")
        shoes = store.read.shoes().drop("open").sort("table_id", "shoe_id")
        seen.append({"outcome": _outcome(store, report),
                     "digests": (coups_digest(coups), shoes_digest(shoes),
                                 shoe_digests(coups).sort("table_id", "shoe_id").to_dicts()),
                     "records": _records(store, report["run"])})
    a, b, c, whole = seen
    assert a == b  # the same chunks: the same files, whatever the threads did
    for other in (c, whole):
        assert other["outcome"] == a["outcome"] and other["digests"] == a["digests"]
    assert sum(r["rows"] for r in a["records"] if r["table"] == "coups") \
        == a["outcome"]["totals"]["accepted"] > 500
    assert len(a["records"]) > len(whole["records"])  # (the chunks were many buckets)
