"""The store: live shoes, corrections, sealing, the one read API, compaction."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from roads.store.parquet import scan
from roads.rules import get_rules
from roads.schema import COUPS
from roads.simulate import Simulation, write_simulation
from roads.store.live import CoupEntry, LiveError, LiveTables
from roads.store.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


def test_live_shoe_life_cycle(store: Store) -> None:
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "standard-8", "dealer", burn_cards=["3h", "Kd", "2c", "9s"])
    with pytest.raises(LiveError, match="already has shoe S1 open"):
        live.open_shoe("T1", "S2", "standard-8", "dealer")
    live.enter_coup("T1", CoupEntry(outcome="B"), "dealer")
    event = live.enter_coup("T1", CoupEntry(player_cards=("9h", "Kd"), banker_cards=("5s", "2c")),
                            "dealer")
    assert event.payload["coup"] == 2 and event.payload["outcome"] == "P"
    assert event.payload["natural"] is True and event.payload["player_total"] == 9
    coups = store.read_coups("T1")
    assert coups["coup"].to_list() == [1, 2] and dict(coups.schema) == COUPS
    live.close_shoe("T1", "dealer")
    with pytest.raises(LiveError, match="has no open shoe"):
        live.enter_coup("T1", CoupEntry(outcome="B"), "dealer")
    store.seal("T1", "S1")
    assert store.read_coups("T1")["coup"].to_list() == [1, 2]  # sealed, read once
    shoe = store.read_shoes().row(0, named=True)
    assert shoe["burn_cards"] == ["3h", "Kd", "2c", "9s"] and shoe["coups"] == 2
    assert shoe["cards_dealt"] is None  # coup 1 was outcome-only


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
def test_impossible_coups_are_refused(store: Store, player: tuple[str, ...],
                                      banker: tuple[str, ...], message: str) -> None:
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "standard-8", "dealer")
    with pytest.raises(Exception, match=message):
        live.enter_coup("T1", CoupEntry(player_cards=player, banker_cards=banker), "dealer")
    assert store.read_coups("T1").is_empty()


def test_corrections_apply_on_read_and_originals_stay(store: Store) -> None:
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "standard-8", "dealer")
    for outcome in "BBPT":
        live.enter_coup("T1", CoupEntry(outcome=outcome), "dealer")
    with pytest.raises(LiveError, match="approver other than"):
        live.void_coup("T1", "S1", 2, "dealer", "double entry", "dealer")
    with pytest.raises(LiveError, match="needs a reason"):
        live.void_coup("T1", "S1", 2, "dealer", " ", "super")
    with pytest.raises(LiveError, match="has no coup 9"):
        live.void_coup("T1", "S1", 9, "dealer", "typo", "super")
    live.void_coup("T1", "S1", 2, "dealer", "double entry", "super")
    with pytest.raises(LiveError, match="already void"):
        live.void_coup("T1", "S1", 2, "dealer", "again", "super")
    live.amend_coup("T1", "S1", 3, CoupEntry(outcome="B"), "dealer", "keyed P for B", "super")
    assert "".join(store.read_coups("T1")["outcome"]) == "BBT"
    assert store.read_coups("T1")["coup"].to_list() == [1, 3, 4]
    assert "".join(store.read_coups("T1", originals=True)["outcome"]) == "BBPT"
    live.close_shoe("T1", "dealer")
    store.seal("T1", "S1")
    # Sealed Parquet holds the originals; the read API still applies the corrections.
    assert "".join(scan(store.root, "coups").collect()["outcome"]) == "BBPT"
    assert "".join(store.read_coups("T1")["outcome"]) == "BBT"
    kinds = [e.kind for e in store.journal.events()]
    assert kinds.count("coup_voided") == 1 and kinds.count("coup_amended") == 1


def test_corrections_reach_imported_coups(store: Store, tmp_path: Path) -> None:
    write_simulation(Simulation(get_rules("standard-8"), shoes=1, seed=4), store.root)
    first = store.read_coups().row(0, named=True)
    LiveTables(store.journal).amend_coup(first["table_id"], first["shoe_id"], 1,
                                         CoupEntry(outcome="T"), "auditor", "video review",
                                         "manager")
    assert store.read_coups().row(0, named=True)["outcome"] == "T"
    assert store.read_coups(originals=True).row(0, named=True)["outcome"] == first["outcome"]


def test_seal_pending_after_a_crash_between_close_and_seal(store: Store) -> None:
    live = LiveTables(store.journal)
    live.open_shoe("T1", "S1", "casino-6", "dealer")
    live.enter_coup("T1", CoupEntry(outcome="P"), "dealer")
    live.close_shoe("T1", "dealer")  # ... and the process died before sealing
    assert store.seal_pending() == [("T1", "S1")]
    assert store.seal_pending() == []
    store.seal("T1", "S1")  # sealing twice replaces, never duplicates
    assert store.read_coups("T1").height == 1
    assert store.read_shoes().height == 1


def test_compaction_merges_closed_days_only(store: Store) -> None:
    sim = Simulation(get_rules("standard-8"), shoes=6, seed=8, tables=2)
    coups = pl.concat([write_and_read(sim, store, i) for i in range(3)])
    info = store.info()
    assert info["coups"]["files"] == 3 and info["coups"]["rows"] == coups.height
    before = store.read_coups()
    report = store.compact(before=date(2100, 1, 1))
    assert report["partitions_compacted"] >= 1
    assert store.info()["coups"]["files"] == store.info()["coups"]["partitions"]
    assert store.read_coups().equals(before)
    assert store.compact(before=date(2100, 1, 1))["partitions_compacted"] == 0


def write_and_read(sim: Simulation, store: Store, i: int) -> pl.DataFrame:
    tmp = store.root.parent / f"sim{i}"
    write_simulation(Simulation(sim.rules, shoes=sim.shoes, seed=sim.seed + i, tables=2), tmp)
    frame = scan(tmp, "coups").collect()
    store.append(frame, scan(tmp, "shoes").collect(), {"source": "engine"})
    return frame


def test_interrupted_compaction_is_invisible_and_finished_later(store: Store) -> None:
    import json

    sim = Simulation(get_rules("standard-8"), shoes=2, seed=3)
    write_and_read(sim, store, 0)
    write_and_read(sim, store, 1)
    partition = next((store.root / "coups").glob("date=*"))
    old = sorted(p.name for p in partition.glob("part-*.parquet"))
    before = store.read_coups()
    # Simulate a crash right after the merged file was published, before old parts went.
    merged = pl.read_parquet(sorted(partition.glob("part-*.parquet")))
    from roads.store.parquet import AtomicParquetWriter

    with AtomicParquetWriter(partition / "part-merged.parquet", "coups", {}) as w:
        w.write(merged.to_arrow())
    (partition / "_compaction.json").write_text(json.dumps({"new": "part-merged.parquet",
                                                            "old": old}))
    assert store.read_coups().equals(before)  # no duplicates while the note exists
    store.compact(before=date(1900, 1, 1))  # finishes the interrupted one, merges nothing
    assert sorted(p.name for p in partition.glob("part-*.parquet")) == ["part-merged.parquet"]
    assert store.read_coups().equals(before)
