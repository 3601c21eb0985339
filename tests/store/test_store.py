"""The store: live shoes, corrections, sealing, the read port, compaction, file names."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roads.ingest.entry import CoupEntry
from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.schema import COUPS, SHOE_KEY, conform
from roads.simulate import Simulation, write_simulation
from roads.store import NoStore, Selection, Store
from roads.store.digest import combine, shoe_digests, shoes_digest
from roads.store.layout import part_name
from roads.store.store import shoe_index_frame
from roads.tables import LiveError
from tests.floor import Floor


@pytest.fixture
def floor(tmp_path: Path) -> Floor:
    return Floor(tmp_path / "store")


def test_live_shoe_life_cycle(floor: Floor) -> None:
    store = floor.store
    floor.open_shoe("T1", "S1", burn_cards=["3h", "Kd", "2c", "9s"])
    with pytest.raises(LiveError, match="already has shoe S1 open"):
        floor.open_shoe("T1", "S2")
    floor.coup("T1", "B")
    event = floor.coup("T1", player=("9h", "Kd"), banker=("5s", "2c"))
    assert event.payload["coup"] == 2 and event.payload["outcome"] == "P"
    assert event.payload["natural"] is True and event.payload["player_total"] == 9
    coups = store.read.coups(Selection("T1"))
    assert coups["coup"].to_list() == [1, 2] and dict(coups.schema) == COUPS
    assert coups["entry"].cast(str).to_list() == ["keypad", "cards"]
    assert coups["entered_by"].to_list() == ["dealer", "dealer"]
    assert store.read.shoes()["open"].to_list() == [True]
    floor.close("T1")
    with pytest.raises(LiveError, match="has no open shoe"):
        floor.coup("T1", "B")
    assert store.read.coups(Selection("T1"))["coup"].to_list() == [1, 2]  # sealed, read once
    shoe = store.read.shoes().row(0, named=True)
    assert shoe["burn_cards"] == ["3h", "Kd", "2c", "9s"] and shoe["coups"] == 2
    assert shoe["cards_dealt"] is None and shoe["open"] is False  # coup 1 was outcome-only


@pytest.mark.parametrize(
    ("player", "banker", "message"),
    [
        (("2h", "3d"), ("5s", "2c"), "the Player must draw a third card on 5"),
        (("9h", "Kd", "2c"), ("5s", "2c"), "by the tableau the Player takes 2"),
        # Player stood on 6; the Banker on 4 must draw (the "never draws on 4 or 5" defect)
        (("3h", "3d"), ("Ks", "4c"), "the Banker must draw a third card on 4"),
        (("As", "Zz"), ("Ks", "4c"), "not a card"),
    ],
)
def test_impossible_coups_are_refused(floor: Floor, player: tuple[str, ...],
                                      banker: tuple[str, ...], message: str) -> None:
    floor.open_shoe("T1", "S1")
    with pytest.raises(Exception, match=message):
        floor.coup("T1", player=player, banker=banker)
    assert floor.store.read.coups(Selection("T1")).is_empty()


def test_an_imported_coup_voided_twice_is_already_void(floor: Floor, tmp_path: Path) -> None:
    """A second void of an imported coup was refused as "shoe H1 at table T9 has no coup
    2" (the voided coup is in no corrected record, and an imported coup has no entry
    event); it is refused as already void, and an amendment of it too."""
    csv = tmp_path / "import.csv"
    csv.write_text("table,shoe,coup,result\nT9,H1,1,B\nT9,H1,2,P\n")
    ingest([csv], floor.store, ReadOptions(), get_rules("standard-8"))
    floor.void("T9", "H1", 2)
    with pytest.raises(LiveError, match="coup 2 of shoe H1 is already void"):
        floor.void("T9", "H1", 2)
    with pytest.raises(LiveError, match="coup 2 of shoe H1 is already void"):
        floor.amend("T9", "H1", 2, CoupEntry(outcome="B", method="keypad"))
    with pytest.raises(LiveError, match="has no coup 3"):
        floor.void("T9", "H1", 3)


def test_corrections_apply_on_read_and_originals_stay(floor: Floor) -> None:
    store = floor.store
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BBPT")
    floor.void("T1", "S1", 2)
    with pytest.raises(LiveError, match="already void"):
        floor.void("T1", "S1", 2)
    floor.amend("T1", "S1", 3, CoupEntry(outcome="B", method="keypad"))
    assert "".join(store.read.coups(Selection("T1"))["outcome"]) == "BBT"
    assert store.read.coups(Selection("T1"))["coup"].to_list() == [1, 3, 4]
    assert "".join(store.read.coups(Selection("T1"), originals=True)["outcome"]) == "BBPT"
    marked = store.read.coups(Selection("T1"), marked=True)
    assert marked["correction"].to_list() == [None, "voided", "amended", None]
    floor.close("T1")
    # Sealed Parquet holds the originals; the read port still applies the corrections.
    [sealed] = [f for f in store.journal.of_kinds(("shoe_sealed",))]
    path = store.root / sealed.payload["files"][0]["path"]
    assert "".join(pl.read_parquet(path)["outcome"]) == "BBPT"
    assert "".join(store.read.coups(Selection("T1"))["outcome"]) == "BBT"


def test_seal_pending_after_a_crash_between_close_and_seal(floor: Floor) -> None:
    store = floor.store
    floor.open_shoe("T1", "S1", rules="casino-6")
    floor.coup("T1", "P")
    store.journal.run(lambda tx: tx.append("shoe_closed", "T1", "S1", {}, "dealer"))
    # ... and the process died before sealing: the shoe reads from the journal, once.
    assert store.read.coups(Selection("T1")).height == 1
    assert store.read.shoes()["open"].to_list() == [False]
    assert floor.service.recover() == [("T1", "S1")]
    assert floor.service.recover() == []
    store.seal("T1", "S1")  # sealing again changes nothing
    assert store.read.coups(Selection("T1")).height == 1
    assert store.read.shoes().height == 1
    assert len(store.journal.of_kinds(("shoe_sealed",))) == 1


def _import_days(store: Store, tmp: Path, runs: int) -> pl.DataFrame:
    for i in range(runs):
        csv = tmp / f"day{i}.csv"
        rows = [f"T{i},S{j},{k},{'BPT'[(i + j + k) % 3]},2026-01-0{1 + j % 2}T10:0{k}:00Z"
                for j in range(3) for k in range(1, 4)]
        csv.write_text("table,shoe,coup,result,time\n" + "\n".join(rows) + "\n")
        ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    return store.read.coups()


def test_compaction_merges_closed_days_and_reads_the_same(floor: Floor, tmp_path: Path) -> None:
    store = floor.store
    before = _import_days(store, tmp_path, 3)
    assert store.info()["coups"]["files"] == 6  # 3 runs x 2 days
    report = store.compact(before=date(2100, 1, 1))
    assert report == {"partitions_compacted": 4, "files_replaced": 12}  # coups and shoes
    assert store.info()["coups"]["files"] == 2 and store.info()["problems"] == []
    assert store.read.coups().equals(before)
    assert store.compact(before=date(2100, 1, 1))["partitions_compacted"] == 0
    from roads.store.verify import verify

    assert verify(store, deep=True).ok


def test_compaction_refuses_an_altered_file(floor: Floor, tmp_path: Path) -> None:
    store = floor.store
    _import_days(store, tmp_path, 2)
    victim = sorted((store.root / "coups").rglob("part-*.parquet"))[0]
    victim.write_bytes(victim.read_bytes()[:-1] + b"\0")
    with pytest.raises(Exception, match="does not match its journaled SHA-256"):
        store.compact(before=date(2100, 1, 1))


def test_a_file_no_event_names_is_never_read(floor: Floor, tmp_path: Path) -> None:
    store = floor.store
    before = _import_days(store, tmp_path, 1)
    stray = store.root / "coups" / "date=2026-01-01" / "part-import-stray.parquet"
    stray.write_bytes(next((store.root / "coups").rglob("part-*.parquet")).read_bytes())
    assert store.read.coups().equals(before)
    assert [p["kind"] for p in store.info()["problems"]] == ["not accounted for"]


def test_reads_never_create_a_store(tmp_path: Path) -> None:
    with pytest.raises(NoStore, match="no store at"):
        Store.open(tmp_path / "typo")
    assert not (tmp_path / "typo").exists()


# Pairs today's sanitising scheme gave one name: unsafe characters, and long ids.
COLLIDING = [(("T:1", "S1"), ("T_1", "S1")), (("T1", "S:1"), ("T1", "S_1")),
             (("T1", "S1"), ("T1-S1", "")), (("A" * 80 + "x", "S"), ("A" * 80 + "y", "S")),
             (("T1", "ab/cd"), ("T1", "ab cd"))]


@pytest.mark.parametrize(("a", "b"), COLLIDING)
def test_part_names_never_collide(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert part_name("live", *a) != part_name("live", *b)


@given(st.tuples(st.text(min_size=1, max_size=70), st.text(max_size=70)),
       st.tuples(st.text(min_size=1, max_size=70), st.text(max_size=70)))
def test_part_names_are_injective(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert (part_name("live", *a) == part_name("live", *b)) == (a == b)


def test_two_shoes_whose_safe_names_match_are_both_kept(floor: Floor) -> None:
    for table in ("T:1", "T_1"):
        floor.open_shoe(table, "S1")
        floor.coups(table, "BP" if table == "T:1" else "PPBT")
        floor.close(table)
    counts = floor.store.read.coups().group_by("table_id").len().sort("table_id")
    assert counts.rows() == [("T:1", 2), ("T_1", 4)]


def test_engine_runs_go_through_the_catalogue(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "sim")
    files, coups = write_simulation(Simulation(get_rules("standard-8"), shoes=20, seed=3,
                                               tables=2), store)
    assert len(files) == 2 and store.read.coups().height == coups
    [event] = store.journal.of_kinds(("files_published",))
    assert sorted(f["path"] for f in event.payload["files"]) == sorted(files)


def test_part_footers_carry_null_counts_and_no_ranges(tmp_path: Path) -> None:
    """Ranges cost 40 % of a part's encoding and nothing prunes by them; null counts are
    cheap and tell a reader a column is complete without scanning it."""
    import pyarrow.parquet as pq

    store = Store.create(tmp_path / "sim")
    files, _ = write_simulation(Simulation(get_rules("standard-8"), shoes=3, seed=5), store)
    for name in files:
        meta = pq.read_metadata(store.root / name)
        for i in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                stats = meta.row_group(i).column(c).statistics
                assert stats is not None and stats.has_null_count
                assert not stats.has_min_max


def test_an_ingest_makes_every_part_durable_before_its_commit_journals_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Import parts are written without an fsync each (they are synced side by side at the
    commit): the commit must sync every one of them before its event exists."""
    import roads.files
    from roads.store import catalog

    synced: list[Path] = []
    real = roads.files._fsync_file

    def recording(path: Path) -> None:
        synced.append(path)
        real(path)

    monkeypatch.setattr(roads.files, "_fsync_file", recording)
    journaled: list[int] = []  # how many files were synced when the event was appended
    real_record = catalog.record

    def record(*args: Any, **kwargs: Any) -> None:
        journaled.append(len(synced))
        real_record(*args, **kwargs)

    monkeypatch.setattr(catalog, "record", record)
    source = tmp_path / "export.csv"
    source.write_text("table,shoe,coup,result,dealt_at\n"
                      + "".join(f"T{t},S{s},{c},B,2026-0{s}-01T10:0{c}:00Z\n"
                                for t in (1, 2) for s in (1, 2) for c in (1, 2, 3)))
    store = Store.create(tmp_path / "store")
    ingest([source], store, ReadOptions(), get_rules("standard-8"))
    parts = {store.root / f.path for f in catalog.files(store.journal.reader())}
    assert len(parts) == 4  # coups and shoes, two days
    assert set(synced) == parts and journaled == [len(synced)]


def test_a_bulk_commit_takes_a_large_page_cache_and_gives_it_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection keeps a small page cache (a server has dozens); only a bulk commit's
    transaction takes the large one, and the connection returns to the small one after."""
    import roads.store.store as store_module
    from roads.store import catalog
    from roads.store.journal import BULK_CACHE_KIB, CACHE_KIB

    during: list[int] = []
    real_record = catalog.record

    def record(db: Any, *args: Any, **kwargs: Any) -> None:
        during.append(db.execute("PRAGMA cache_size").fetchone()[0])
        real_record(db, *args, **kwargs)

    monkeypatch.setattr(store_module, "BULK_ROWS", 3)
    monkeypatch.setattr(catalog, "record", record)
    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=4, seed=3), store)  # bulk
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coup("T1", "B")
    floor.close("T1")  # a seal: two catalogue rows
    assert during == [-BULK_CACHE_KIB, -CACHE_KIB]
    assert store.journal.connection().execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB


@settings(deadline=None)  # (no timing assert: a loaded machine took 0.4 s)
@given(st.lists(st.sampled_from([("T1", "s1"), ("T1", "s2"), ("T2", "s1"), ("T9", "s1"),
                                 ("T1", "x"), ("T2", "s3")]), max_size=8))
def test_shoe_lookups_by_key_equal_a_scan_of_the_catalogue(
        floor_store: Store, keys: list[tuple[str, str]]) -> None:
    """An import asks the catalogue about its own shoes only; the answers equal a scan of
    the whole catalogue (the oracle) for any mix of stored, unknown and new-table keys."""
    from roads.store import catalog

    db = floor_store.journal.reader()
    scan = db.execute("SELECT table_id, shoe_id, path FROM catalog_shoes").fetchall()
    assert sorted(catalog.holding(db, "catalog_shoes", keys)) == sorted(
        r for r in scan if (r[0], r[1]) in set(keys))
    assert catalog.files_of_shoes(db, None, None, keys) == sorted(
        {r[2] for r in scan if (r[0], r[1]) in set(keys)})
    frame = pl.DataFrame(keys, schema={"table_id": pl.String, "shoe_id": pl.String},
                         orient="row")
    stored = set(floor_store.read.shoes().filter(~pl.col("open"))
                 .select("table_id", "shoe_id").iter_rows())
    assert set(floor_store.read.stored_shoe_keys(frame).iter_rows()) == stored & set(keys)


@pytest.fixture(scope="module")
def floor_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Shoes s1, s2 of T1 and s1, s3 of T2 stored (s3 imported), an open shoe x of T1."""
    store = Store.create(tmp_path_factory.mktemp("lookups"))
    floor = Floor(store)
    for table, shoe in (("T1", "s1"), ("T1", "s2"), ("T2", "s1")):
        floor.open_shoe(table, shoe)
        floor.coups(table, "BPT")
        floor.close(table)
    floor.open_shoe("T1", "x")
    floor.coups("T1", "B")
    csv = tmp_path_factory.mktemp("csv") / "s3.csv"
    pl.DataFrame({"table": ["T2"] * 3, "shoe": ["s3"] * 3, "coup": [1, 2, 3],
                  "outcome": list("BPB")}).write_csv(csv)
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
    return store


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A simulated store's coups and shoe rows."""
    sim = Store.create(tmp_path_factory.mktemp("sim") / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=8, seed=5, tables=2), sim)
    return sim.read.coups(), conform(sim.read.shoes(), "shoes")


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), shuffled=st.booleans(), undated=st.integers(0, 3))
def test_parts_cut_by_day_carry_the_digests_their_writer_would_compute(
        tmp_path: Path, simulated: tuple[pl.DataFrame, pl.DataFrame], seed: int,
        shuffled: bool, undated: int) -> None:
    """Shoes spread over days (some past midnight, some undated, rows shuffled or not, one
    shoe row without coups): each part's digest, from one pass over all the rows, is the
    one its own rows give (the writer's digest when a part comes undigested), and so are a
    coups part's shoes and a shoes part's index rows."""
    simulated_coups, shoe_rows = simulated
    rng = np.random.default_rng(seed)
    shoes = simulated_coups.select("table_id", "shoe_id").unique(maintain_order=True)
    moved = shoes.with_columns(
        pl.Series("shift", rng.integers(0, 3, shoes.height) * 86_400_000_000
                  + rng.integers(0, 2, shoes.height) * 84_000_000_000),
        pl.Series("undated", np.arange(shoes.height) < undated))
    coups = simulated_coups.join(moved, on=["table_id", "shoe_id"]).with_columns(
        pl.when("undated").then(None).otherwise(
            pl.col("dealt_at") + pl.duration(microseconds=pl.col("shift"))).alias("dealt_at"))
    if shuffled:
        coups = coups.sample(fraction=1.0, shuffle=True, seed=seed)
    without = shoes.row(-1)  # a shoe row whose coups are not here: filed by its start
    coups = coups.filter(pl.struct("table_id", "shoe_id") != pl.struct(
        table_id=pl.lit(without[0]), shoe_id=pl.lit(without[1])))
    store = Store.create(tmp_path / f"s{seed}")
    parts = store.parts_by_day(coups.drop("shift", "undated"), shoe_rows.sample(
        fraction=1.0, shuffle=True, seed=seed), "import", ("r",), {})
    assert len({p.day for p in parts if p.table == "coups"}) > 1
    for part in parts:
        assert part.content is not None and isinstance(part.frame, pl.DataFrame)
        if part.table == "coups":
            own = shoe_digests(part.frame)
            assert part.content.digest == combine(own)
            assert sorted(part.content.shoes.rows()) == sorted(own.select(*SHOE_KEY).rows())
        else:
            assert part.content.digest == shoes_digest(part.frame)
            assert part.content.index is not None and part.content.index.equals(
                shoe_index_frame(conform(part.frame, "shoes")))
    assert sum(p.frame.height for p in parts if p.table == "shoes") == shoe_rows.height
