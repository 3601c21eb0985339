"""The statistics kernel sees one type of array whatever the data: numba compiles a read-only
array (a column of one chunk, zero-copy) apart from a writable one (a column of several
chunks, copied), so a clean store's first statistics compiled again after ``roads prepare``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TWO_SHOES = """
from datetime import datetime, UTC
import polars as pl
from roads.schema import conform
from roads.stats.partials import _per_shoe_counts, grouped, per_shoe_counts

def shoe(pair):
    return [{"table_id": "T1", "shoe_id": "S1", "coup": i + 1, "outcome": "B",
             "player_pair": pair, "banker_pair": False, "natural": False,
             "player_cards": ["9h", "Kd"], "banker_cards": ["9c", "Kd"],
             "player_total": 9, "banker_total": 9, "dealt_at": datetime(2026, 1, 1, tzinfo=UTC)}
            for i in range(3)]

one = conform(pl.DataFrame(shoe(False)), "coups")
for frame in (one, pl.concat([one[:1], one[1:]], rechunk=False)):  # zero-copy, then copied
    coups, offsets = grouped(frame)
    per_shoe_counts(coups, offsets)
print(len(_per_shoe_counts.signatures))
"""


def test_clean_and_null_columns_reach_the_kernel_as_one_type(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", TWO_SHOES], capture_output=True, text=True,
                         check=True, env={**os.environ, "ROADS_CACHE_DIR": str(tmp_path)})
    assert run.stdout.strip() == "1", run.stdout + run.stderr
