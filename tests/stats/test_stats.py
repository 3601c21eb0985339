"""Statistics, randomness tests, integrity checks and live odds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from roads.cards import CARD_CODES, CARD_POINTS
from roads.engine import deal_batch, shoe_seeds
from roads.odds import Composition, exact_odds
from roads.rules import get_rules
from roads.schema import conform
from roads.simulate import Simulation, write_simulation
from roads.stats.expect import expectation_for_decks
from roads.stats.integrity import integrity_checks
from roads.stats.odds_series import odds_series
from roads.stats.partials import outcome_statistics, wilson
from roads.stats.randomness import holm, randomness_tests, runs_test
from roads.stats.report import report
from roads.stats.sequence import sequence_stats
from roads.store import Selection, Store
from roads.tableau import BANKER_DRAWS, PLAYER_STOOD
from tests.floor import Floor
from tests.stats import import_cards


def outcome_frame(shoes: dict[str, str]) -> pl.DataFrame:
    rows = [{"table_id": "T", "shoe_id": sid, "coup": i + 1, "outcome": o}
            for sid, seq in shoes.items() for i, o in enumerate(seq)]
    return conform(pl.DataFrame(rows), "coups")


NO_SHOES = pl.DataFrame(schema={"table_id": pl.String, "shoe_id": pl.String,
                                "rules": pl.String})


def test_counts_and_expectations_on_constructed_data() -> None:
    coups = outcome_frame({"a": "BBBPPT", "b": "PPPPB"})
    stats = outcome_statistics(coups, NO_SHOES)
    e = expectation_for_decks(8)
    assert stats["coups"] == 11 and stats["shoes"] == 2
    assert stats["outcomes"]["banker"]["count"] == 4
    assert stats["outcomes"]["player"]["count"] == 6
    assert stats["outcomes"]["tie"]["count"] == 1
    assert stats["outcomes"]["banker"]["expected_count"] == pytest.approx(11 * e.outcome["B"])
    assert stats["pairs"]["player"]["n"] == 0  # outcome-only: no pair information
    assert stats["streaks"]["longest_banker_run"] == 3
    assert stats["streaks"]["longest_player_run"] == 4
    dist = stats["streaks"]["run_length_distribution"]
    assert dist["banker"]["3"]["observed"] == 1 and dist["player"]["4"]["observed"] == 1
    assert dist["banker"]["1"]["observed"] == 1 and dist["player"]["2"]["observed"] == 1
    assert stats["streaks"]["runs"] == 4  # BBB|PP  and  PPPP|B (the tie is left out)
    assert stats["pace"]["coups_per_shoe"] == {"mean": 5.5, "min": 5, "max": 6}


def test_expectations_come_from_the_exact_engine() -> None:
    odds = exact_odds(Composition.full(6))
    e = expectation_for_decks(6)
    assert e.outcome["B"] == odds.ways["banker"] / odds.total
    assert e.pair == float(odds.pair_probability)
    assert sum(e.player_total) == pytest.approx(1.0)
    assert e.cards[4] + e.cards[5] + e.cards[6] == pytest.approx(1.0)


def test_wilson_and_holm() -> None:
    low, high = wilson(50, 100)
    assert low < 0.5 < high and high - low == pytest.approx(2 * (0.5 - low))
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5]) == [0.5]


def _seq(outcomes: str, shoes: int = 1) -> object:
    codes = np.array(["BPT".index(c) for c in outcomes * shoes], dtype=np.int8)
    offsets = np.arange(0, len(codes) + 1, len(outcomes), dtype=np.int64)
    return sequence_stats(codes, offsets)


def test_runs_test_on_alternating_and_streaky_sequences() -> None:
    alternating = runs_test(_seq("BP" * 40, shoes=50))  # type: ignore[arg-type]
    streaky = runs_test(_seq(("B" * 10 + "P" * 10) * 4, shoes=50))  # type: ignore[arg-type]
    assert alternating is not None and streaky is not None
    assert alternating[0] > 5 and alternating[1] < 1e-6  # far too many runs
    assert streaky[0] < -5 and streaky[1] < 1e-6  # far too few
    rng = np.random.default_rng(4)
    fair = "".join(rng.choice(["B", "P"], size=4000))
    z, p = runs_test(_seq(fair))  # type: ignore[arg-type,misc]
    assert abs(z) < 3 and p > 0.003


def _dealt_frame(batch: object, rules_name: str, defective: bool) -> pl.DataFrame:
    """Coups re-dealt from the engine's shuffled shoes, optionally with a defective dealer
    whose Banker never draws on 4 or 5."""
    points = np.array(CARD_POINTS)
    rows = []
    rules = get_rules(rules_name)
    for s, shoe in enumerate(batch.shoes):  # type: ignore[attr-defined]
        pos = 1 + (min(10, int(points[shoe[0]]) or 10) if rules.burn_rule == "first-card" else 0)
        cut = rules.cards - rules.cut_card_from_end[0]
        coup = 0
        while True:
            start = pos
            p = [shoe[pos], shoe[pos + 2]]
            b = [shoe[pos + 1], shoe[pos + 3]]
            pos += 4
            pt, bt = (points[p[0]] + points[p[1]]) % 10, (points[b[0]] + points[b[1]]) % 10
            if pt < 8 and bt < 8:
                third = PLAYER_STOOD
                if pt <= 5:
                    p.append(shoe[pos])
                    pos += 1
                    third = points[p[2]]
                    pt = (pt + third) % 10
                draws = bool(BANKER_DRAWS[bt, third])
                if defective and bt in (4, 5):
                    draws = False
                if draws:
                    b.append(shoe[pos])
                    pos += 1
                    bt = (bt + points[b[2]]) % 10
            coup += 1
            rows.append({"table_id": "T", "shoe_id": f"s{s}", "coup": coup,
                         "outcome": "B" if bt > pt else "P" if pt > bt else "T",
                         "player_cards": [CARD_CODES[c] for c in p],
                         "banker_cards": [CARD_CODES[c] for c in b],
                         "player_total": int(pt), "banker_total": int(bt)})
            if start >= cut:
                break
    return conform(pl.DataFrame(rows), "coups")


def test_chi_square_catches_a_banker_who_never_draws_on_4_or_5() -> None:
    batch = deal_batch(get_rules("standard-8"), shoe_seeds(555, 0, 1000))
    bad = _dealt_frame(batch, "standard-8", defective=True)
    assert 80_000 <= bad.height < 84_000  # the defective dealer uses fewer cards per coup
    result = report(bad, NO_SHOES, with_integrity=False)
    flagged = {t["test"] for t in result["randomness"]["tests"] if t["flagged"]}
    assert "banker final totals" in flagged
    clean = _dealt_frame(batch, "standard-8", defective=False)
    assert not report(clean, NO_SHOES, with_integrity=False)["randomness"]["flagged"]


def test_a_clean_million_coup_simulation_is_not_flagged(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    write_simulation(Simulation(get_rules("standard-8"), shoes=12_400, seed=20261130,
                                tables=10), store)
    coups = store.read.coups()
    assert coups.height >= 1_000_000
    result = report(coups, store.read.shoes())
    assert not result["randomness"]["flagged"], result["randomness"]
    assert result["integrity"] == []
    assert len(result["randomness"]["tests"]) == 10


def test_integrity_findings(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    write_simulation(Simulation(get_rules("standard-6"), shoes=4, seed=31), store)
    coups = store.read.coups()
    shoes = store.read.shoes().drop("open")
    first = shoes["shoe_id"][0]
    # A shoe dealt twice: the same cards under another shoe id.
    copy = coups.filter(pl.col("shoe_id") == first).with_columns(pl.lit("AGAIN").alias("shoe_id"))
    copy_shoe = shoes.filter(pl.col("shoe_id") == first).with_columns(
        pl.lit("AGAIN").alias("shoe_id"))
    # A wrong total on one coup, and a burn that does not match its exposed card.
    tampered = coups.with_columns(
        pl.when((pl.col("shoe_id") == first) & (pl.col("coup") == 3))
        .then((pl.col("player_total") + 1) % 10).otherwise(pl.col("player_total"))
        .alias("player_total"))
    shoes2 = pl.concat([shoes, copy_shoe]).with_columns(
        pl.when(pl.col("shoe_id") == shoes["shoe_id"][1])
        .then(pl.col("burn_cards").list.slice(0, 1)).otherwise(pl.col("burn_cards"))
        .alias("burn_cards"))
    findings = integrity_checks(pl.concat([tampered, copy]), shoes2)
    checks = {(f["check"], f["shoe_id"]) for f in findings}
    # a repeat is reported once, under the pair's first shoe in key order, naming both
    assert [(f["shoe_id"], f"shoe {first} at" in f["explanation"]) for f in findings
            if f["check"] == "repeated shoe"] == [("AGAIN", True)]
    assert ("totals", first) in checks
    totals = next(f for f in findings if f["check"] == "totals")
    assert totals["coups"] == [3] and totals["severity"] == "high"
    burn = [f for f in findings if f["check"] == "burn"]
    if shoes["burn_cards"][1][0][0] not in "A":  # an ace burns one card: slice keeps none
        assert burn and "calls for" in burn[0]["explanation"]


def test_cards_in_deck_order_are_an_ordered_run() -> None:
    suit_major = [r + s for s in "shdc" for r in "A23456789TJQK"] * 8  # new packs, unshuffled
    rows, pos, coup = [], 0, 0
    while pos + 6 < 200:
        coup += 1
        rows.append({"table_id": "T", "shoe_id": "DECK", "coup": coup, "outcome": "B",
                     "player_cards": [suit_major[pos], suit_major[pos + 2]],
                     "banker_cards": [suit_major[pos + 1], suit_major[pos + 3]]})
        pos += 4
    findings = integrity_checks(conform(pl.DataFrame(rows), "coups"), NO_SHOES)
    runs = [f for f in findings if f["check"] == "ordered run"]
    assert len(runs) == 1 and "13 cards in a row of ascending rank" in runs[0]["explanation"]
    shuffled = integrity_checks(_dealt_frame(deal_batch(get_rules("standard-8"),
                                                        shoe_seeds(9, 0, 20)), "standard-8",
                                             defective=False), NO_SHOES)
    assert not [f for f in shuffled if f["check"] == "ordered run"]


def test_live_odds_after_known_cards_equal_the_exact_engine() -> None:
    rules = get_rules("standard-8")
    coups = conform(pl.DataFrame([
        {"table_id": "T", "shoe_id": "S", "coup": 1, "outcome": "P",
         "player_cards": ["9h", "Kd"], "banker_cards": ["5s", "2c"]},
        {"table_id": "T", "shoe_id": "S", "coup": 2, "outcome": "B",
         "player_cards": ["Th", "Qc", "5d"], "banker_cards": ["7s", "Kh"]},
    ]), "coups")
    burn = ["3h", "4d", "5c", "6s"]
    series = odds_series(rules, burn, coups)
    assert [s["cards_left"] for s in series] == [412, 408, 403]
    seen = [*burn, "9h", "Kd", "5s", "2c", "Th", "Qc", "5d", "7s", "Kh"]
    odds = exact_odds(Composition.after_seen(8, seen))
    assert series[-1]["probability"]["banker"] == pytest.approx(
        float(odds.probability("banker")), rel=0, abs=0)
    assert series[-1]["house_edge"]["banker"] == float(odds.house_edges(rules)["banker"])
    assert series[-1]["composition"]["K"] == 32 - 2


def test_randomness_without_data() -> None:
    stats = outcome_statistics(outcome_frame({"a": "B"}), NO_SHOES)
    result = randomness_tests(stats, _seq("B"))  # type: ignore[arg-type]
    assert result["tests"] == [] and result["flagged"] is False


def test_per_file_partials_combine_exactly_and_apply_corrections(tmp_path: Path) -> None:
    from roads.analysis import statistics
    from roads.ingest.entry import CoupEntry

    store = Store.create(tmp_path / "store")
    write_simulation(Simulation(get_rules("standard-8"), shoes=50, seed=77, tables=5,
                                batch_shoes=16), store)
    coups = store.read.coups()
    # A shoe imported in two parts: its halves live in different files.
    split = coups.filter(pl.col("shoe_id") == coups["shoe_id"][0]).sort("coup")
    for n, part in enumerate((split.head(30), split.tail(split.height - 30))):
        import_cards(store, part, "SPLIT", tmp_path / f"half{n}.csv")
    # A live shoe, still open, and a correction of an engine coup.
    floor = Floor(store)
    floor.open_shoe("L1", "open-shoe")
    floor.coups("L1", "BBPT")
    floor.amend("SIM-01", coups["shoe_id"][0], 1, CoupEntry(outcome="T", method="keypad"))
    floor.void("SIM-02", coups.filter(pl.col("table_id") == "SIM-02")["shoe_id"][0], 2)
    everything = store.read.coups()
    whole = report(everything, store.read.shoes(), with_integrity=False)
    fast = statistics(store, integrity=False)
    assert fast["statistics"] == whole["statistics"]  # identical, floats included
    assert fast["randomness"] == whole["randomness"]
    assert fast["statistics"]["coups"] == coups.height + split.height + 4 - 1
    one = statistics(store, Selection("SIM-01"), integrity=False)
    assert one["statistics"] == report(store.read.coups(Selection("SIM-01")),
                                       store.read.shoes(), with_integrity=False)["statistics"]


def assert_close(a: object, b: object) -> None:
    """Equal structures; integers exactly, floats up to summation order."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_close(a[key], b[key])
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_close(x, y)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    else:
        assert a == b


def test_statistics_reader_counts_each_rows_cards(tmp_path: Path) -> None:
    """The fast reader's card counts belong to their own rows (card-level and keypad)."""
    from roads.store import statistics_columns

    store = Store.create(tmp_path)
    write_simulation(Simulation(get_rules("standard-8"), shoes=12, seed=5, tables=3,
                                batch_shoes=4), store)
    floor = Floor(store)
    floor.open_shoe("K1", "KS")
    floor.coups("K1", "BPT")
    floor.close("K1")
    paths = sorted((tmp_path / "coups").rglob("part-*.parquet"))
    assert len(paths) == 4
    for path in paths:
        fast = statistics_columns(path)
        full = pl.read_parquet(path)
        expected = (full["player_cards"].list.len() + full["banker_cards"].list.len())
        assert fast["cards"].to_list() == expected.cast(pl.Int8).to_list()
        assert fast["coup"].to_list() == full["coup"].to_list()


def test_the_scan_file_by_file_finds_what_the_whole_slice_does(tmp_path: Path) -> None:
    """Batches of whole shoes (a store's files), a shoe cut across two of them and a
    repeated shoe in another batch give the findings of one pass over everything."""
    from roads.stats.integrity import IntegrityScan, integrity_checks

    store = Store.create(tmp_path)
    write_simulation(Simulation(get_rules("standard-6"), shoes=12, seed=33, tables=2), store)
    coups, shoes = store.read.coups(), store.read.shoes()
    first = coups["shoe_id"][0]
    again = coups.filter(pl.col("shoe_id") == first).with_columns(
        pl.lit("AGAIN").alias("shoe_id"))
    # Most of a shoe again (an unshuffled pack): the first 80 % of its coups.
    part = coups.filter(pl.col("shoe_id") == coups["shoe_id"][-1])
    near = part.head(part.height * 8 // 10).with_columns(pl.lit("NEAR").alias("shoe_id"))
    everything = pl.concat([coups, again, near])
    whole = integrity_checks(everything, shoes)
    assert any(f["check"] == "repeated shoe" and f"shoe {first} at" in f["explanation"]
               for f in whole)
    assert any("NEAR" in f["explanation"] for f in whole if f["check"] == "repeated shoe")
    cut = coups.filter(pl.col("shoe_id") == first)
    rest = coups.filter(pl.col("shoe_id") != first)
    batches = (rest.head(300), cut.head(10), rest.tail(rest.height - 300), cut.tail(
        cut.height - 10), again, near)
    # The shoes met in two batches (the store knows them from its catalogue).
    met = pl.concat([b.select("table_id", "shoe_id").unique().with_columns(
        pl.lit(n).alias("batch")) for n, b in enumerate(batches)])
    split = frozenset(met.filter(pl.struct("table_id", "shoe_id").is_duplicated())
                      .select("table_id", "shoe_id").unique().iter_rows())
    assert (str(cut["table_id"][0]), first) in split and len(split) == 2
    scan = IntegrityScan(shoes, split=split)
    for batch in reversed(batches):  # the order of batches does not matter
        scan.add(batch)
    wanted = pl.DataFrame(sorted(split), schema={"table_id": pl.String, "shoe_id": pl.String},
                          orient="row")
    scan.add(everything.join(wanted, on=["table_id", "shoe_id"], how="semi"), whole=True)
    assert scan.windows.left_out == 0
    assert scan.findings() == whole  # every finding, in the same order
    key = ["check", "table_id", "shoe_id", "explanation"]

    def rows(found: list[dict[str, object]]) -> list[tuple[object, ...]]:
        return sorted(tuple(f[k] for k in key) for f in found)

    assert rows(scan.findings()) == rows(whole)
