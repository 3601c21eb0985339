"""Simulated datasets: canonical schema, provenance, reproducibility, atomic files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from roads.engine import deal_shoe
from roads.rules import get_rules
from roads.schema import COUPS, SCHEMA_VERSION, SHOES, SchemaError, conform
from roads.simulate import Simulation, write_simulation
from roads.store import Store
from roads.tableau import deal_coup


def _run(tmp_path: Path, name: str = "a", **kw: object) -> tuple[pl.DataFrame, pl.DataFrame]:
    sim = Simulation(rules=get_rules("standard-8"), shoes=30, seed=99, tables=3,
                     batch_shoes=8, **kw)  # type: ignore[arg-type]
    store = Store.create(tmp_path / name)
    write_simulation(sim, store)
    return store.read.coups(), store.read.shoes().drop("open")


def test_canonical_schema_and_contents(tmp_path: Path) -> None:
    coups, shoes = _run(tmp_path)
    assert dict(coups.schema) == COUPS
    assert dict(shoes.schema) == SHOES
    assert shoes.height == 30 and set(shoes["table_id"]) == {"SIM-01", "SIM-02", "SIM-03"}
    assert coups.height == shoes["coups"].sum()
    per_shoe = coups.group_by("shoe_id").agg(pl.len(), pl.col("coup").min().alias("lo"),
                                             pl.col("coup").max().alias("hi"))
    assert (per_shoe["lo"] == 1).all() and (per_shoe["hi"] == per_shoe["len"]).all()
    assert set(coups["source"]) == {"engine"}
    # Every stored coup agrees with an independent replay of its cards.
    for row in coups.head(300).iter_rows(named=True):
        p, b = row["player_cards"], row["banker_cards"]
        coup = deal_coup([p[0], b[0], p[1], b[1], *p[2:], *b[2:]])
        assert (coup.player_total, coup.banker_total, coup.outcome, coup.natural,
                coup.player_pair, coup.banker_pair) == (
            row["player_total"], row["banker_total"], row["outcome"], row["natural"],
            row["player_pair"], row["banker_pair"])


def test_shoes_table_replays_from_its_seed(tmp_path: Path) -> None:
    coups, shoes = _run(tmp_path)
    first = shoes.row(4, named=True)
    dealt = deal_shoe(get_rules(first["rules"]), first["seed"])
    assert list(first["burn_cards"]) == list(dealt.burn_cards)
    assert first["cut_card_index"] == dealt.cut_card_index == 400
    assert first["coups"] == len(dealt.coups)
    assert first["cards_dealt"] == dealt.cards_dealt
    mine = coups.filter(pl.col("shoe_id") == first["shoe_id"]).sort("coup")
    assert [tuple(c) for c in mine["player_cards"]] == [p for p, _ in dealt.coups]
    assert first["ended_at"] == mine["dealt_at"].max()
    assert first["started_at"] == mine["dealt_at"].min()


def test_same_seed_same_records(tmp_path: Path) -> None:
    a_coups, a_shoes = _run(tmp_path, "a")
    b_coups, b_shoes = _run(tmp_path, "b")
    assert a_coups.equals(b_coups) and a_shoes.equals(b_shoes)


def test_rerun_replaces_instead_of_duplicating(tmp_path: Path) -> None:
    _run(tmp_path, "a")
    coups, _ = _run(tmp_path, "a")
    assert coups.height == coups.unique(["shoe_id", "coup"]).height


def test_provenance_metadata(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    _run(tmp_path)
    files = sorted((tmp_path / "a" / "coups").rglob("part-*.parquet"))
    assert len(files) == 4  # 30 shoes in batches of 8
    meta = {k.decode(): v.decode() for k, v in (pq.read_metadata(files[0]).metadata or {}
                                                 ).items()}
    assert meta["roads.schema_version"] == str(SCHEMA_VERSION)
    assert meta["roads.rules"] == "standard-8"
    assert meta["roads.seed"] == "99"
    assert meta["roads.source"] == "engine"
    assert "roads.software_version" in meta


def test_a_run_killed_before_its_event_leaves_nothing_visible(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    code = ("import sys; from pathlib import Path; from roads.rules import get_rules; "
            "from roads.simulate import Simulation, write_simulation; "
            "from roads.store import Store; write_simulation(Simulation(get_rules("
            "'standard-8'), shoes=40, seed=1, batch_shoes=8), Store.create(Path(sys.argv[1])))")
    env = {**os.environ, "ROADS_KILL_AT": "store:part-written", "ROADS_KILL_AFTER": "3"}
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s")], env=env,
                          timeout=300, check=False)
    assert done.returncode == -9
    store = Store.open(tmp_path / "s")
    assert store.read.coups().is_empty()  # the written parts are invisible...
    assert any((tmp_path / "s" / "coups").rglob("part-engine-*.parquet"))
    _, coups = write_simulation(Simulation(get_rules("standard-8"), shoes=40, seed=1,
                                               batch_shoes=8), store)
    assert store.read.coups().height == coups  # ...and the next run replaces them, once
    assert store.info()["problems"] == []


def test_conform_casts_and_names_missing_columns() -> None:
    raw = pl.DataFrame({"table_id": ["T1"], "shoe_id": ["S1"], "coup": [1], "outcome": ["B"]})
    out = conform(raw, "coups")
    assert dict(out.schema) == COUPS and out["player_cards"].null_count() == 1
    with pytest.raises(SchemaError, match="missing column"):
        conform(raw.drop("outcome"), "coups")
    with pytest.raises(SchemaError, match="coups"):
        conform(raw.with_columns(outcome=pl.lit("X")), "coups")
    assert isinstance(pl.DataFrame(schema=SHOES).to_arrow(), pa.Table)


@pytest.mark.parametrize("tables, prefix", [(3, "SIM"), (1, "桌"), (12, "a-much-longer-prefix")])
def test_batch_frames_are_the_batch_tables(tables: int, prefix: str) -> None:
    """The writers' frames (ids gathered by polars) hold exactly the canonical Arrow
    tables' rows and types, whatever the names' widths (inline views or not)."""
    from roads.engine import deal_batch, shoe_seeds
    from roads.ingest.engine_batches import batch_frames, batch_tables

    sim = Simulation(get_rules("standard-6"), shoes=40, seed=7, tables=tables,
                     table_prefix=prefix)
    batch = deal_batch(sim.rules, shoe_seeds(sim.seed, 10, 30))
    coups, shoes = batch_frames(sim, 10, batch)
    arrow_coups, arrow_shoes = batch_tables(sim, 10, batch)
    assert dict(coups.schema) == COUPS and dict(shoes.schema) == SHOES
    assert coups.equals(pl.DataFrame(pl.from_arrow(arrow_coups)))
    assert shoes.equals(pl.DataFrame(pl.from_arrow(arrow_shoes)))
    assert coups["shoe_id"].n_unique() == 30 and coups["table_id"].n_unique() == tables


@pytest.mark.parametrize("tables, prefix, rules", [
    (3, "SIM", "standard-8"), (1, "桌", "standard-6"), (12, "a-much-longer-prefix", "standard-8")])
def test_the_engine_content_is_the_digest_of_its_frame(tables: int, prefix: str,
                                                         rules: str) -> None:
    """The coups file's content hashed from the kernel's buffers is the digest the store
    makes of the frame it writes (docs/store.md's definition, held by tests/store), and
    names the same shoes."""
    from roads.engine import deal_batch, shoe_seeds
    from roads.ingest.engine_batches import EngineFiles
    from roads.store.digest import coups_digest

    sim = Simulation(get_rules(rules), shoes=400, seed=11, tables=tables, table_prefix=prefix)
    files = EngineFiles(sim, 37, deal_batch(sim.rules, shoe_seeds(sim.seed, 37, 300)))
    content = files.coups_content()
    assert content.digest == coups_digest(files.coups)
    assert content.index is None
    assert content.shoes.equals(files.coups.select("table_id", "shoe_id").unique(
        maintain_order=True))
    assert content.shoes.height == 300


@pytest.mark.parametrize("where", ["write_part", "stage"])
def test_a_failed_write_or_staging_fails_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A batch's files are written on writer threads while the next is dealt: an error there
    or in staging its rows (a full disk) is the run's error, not a hang, and nothing is seen."""
    import roads.store.store as store_module

    calls = {"n": 0}
    target = store_module if where == "write_part" else Store
    real = getattr(target, where)

    def failing(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(target, where, failing)
    store = Store.create(tmp_path / "s")
    sim = Simulation(get_rules("standard-8"), shoes=40, seed=1, batch_shoes=8, tables=3)
    with pytest.raises(OSError, match="No space left"):
        write_simulation(sim, store)
    assert store.read.coups().is_empty() and store.read.shoes().is_empty()
    monkeypatch.setattr(target, where, real)
    _, coups = write_simulation(sim, store)
    assert store.read.coups().height == coups
    assert store.read.shoes().height == 40
    assert store.info()["problems"] == []
