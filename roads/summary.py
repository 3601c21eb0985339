"""A per-shoe summary of a canonical dataset (what `make demo` prints)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from roads.store.parquet import scan


def shoe_summary(store: Path) -> pl.DataFrame:
    """One row per shoe: counts of each outcome, pairs, naturals and the outcome string."""
    coups = scan(store, "coups")
    shoes = scan(store, "shoes").select("table_id", "shoe_id", "rules", "started_at")
    per_shoe = (
        coups.sort("table_id", "shoe_id", "coup")
        .group_by("table_id", "shoe_id", maintain_order=True)
        .agg(
            pl.len().alias("coups"),
            (pl.col("outcome") == "B").sum().alias("banker"),
            (pl.col("outcome") == "P").sum().alias("player"),
            (pl.col("outcome") == "T").sum().alias("tie"),
            pl.col("banker_pair").sum().alias("banker_pairs"),
            pl.col("player_pair").sum().alias("player_pairs"),
            pl.col("natural").sum().alias("naturals"),
            pl.col("outcome").cast(pl.String).str.join("").alias("outcomes"),
        )
    )
    return (
        per_shoe.join(shoes, on=["table_id", "shoe_id"], how="left")
        .sort("started_at", "table_id", "shoe_id", nulls_last=True)
        .select(
            "table_id", "shoe_id", "rules", "coups", "banker", "player", "tie",
            "banker_pairs", "player_pairs", "naturals", "outcomes",
        )
        .collect()
    )
