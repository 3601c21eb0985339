"""The per-batch jobs: a part file read the fast way gives the rows of the general path."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from roads.rules import get_rules
from roads.scale.jobs import STATS_ROWS, from_blobs, stats_file, stats_job, to_blob
from roads.schema import COUPS
from roads.simulate import Simulation, write_simulation
from roads.store import Store


def test_stats_file_equals_the_general_job_and_survives_the_trip(tmp_path: Path) -> None:
    write_simulation(Simulation(get_rules("standard-6"), shoes=30, seed=3, tables=3,
                                batch_shoes=10), Store.create(tmp_path))
    path = sorted((tmp_path / "coups").rglob("part-*.parquet"))[0]
    fast = pl.from_arrow(stats_file(str(path)))
    general = pl.from_arrow(stats_job(pq.read_table(path, columns=[
        c for c in COUPS if c not in ("source", "entry", "entered_by")])))
    assert isinstance(fast, pl.DataFrame) and isinstance(general, pl.DataFrame)
    assert fast.height == 10 and fast.equals(general)
    # Only the batch's first row carries the sequence sums.
    assert fast["hist"].null_count() == fast.height - 1
    # What Spark carries back (compressed Arrow IPC) decodes to the same rows.
    back = from_blobs(pl.DataFrame({"arrow": [to_blob(stats_file(str(path)))
                                              .column(0)[0].as_py()]}).to_arrow(), STATS_ROWS)
    assert back.equals(fast)
    assert from_blobs(pl.DataFrame({"arrow": []}, schema={"arrow": pl.Binary}).to_arrow(),
                      STATS_ROWS).equals(STATS_ROWS)
