"""One row per shoe: its counts and its outcome string (what ``roads summary`` lists)."""

from __future__ import annotations

import polars as pl

from roads.schema import SHOE_KEY


def shoe_summary(coups: pl.DataFrame, shoes: pl.DataFrame) -> pl.DataFrame:
    """Counts of each outcome, pairs and naturals per shoe, its outcome string, and the
    shoe's rule set, start and whether it is still open; in start order."""
    per_shoe = (
        coups.sort(*SHOE_KEY, "coup")
        .group_by(*SHOE_KEY, maintain_order=True)
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
    info = shoes.select(*SHOE_KEY, "rules", "started_at", "open",
                        pl.col("source").cast(pl.String))
    return (
        info.join(per_shoe, on=list(SHOE_KEY), how="left")
        .with_columns(pl.col("coups", "banker", "player", "tie", "banker_pairs",
                             "player_pairs", "naturals").fill_null(0),
                      pl.col("outcomes").fill_null(""))
        .sort("started_at", *SHOE_KEY, nulls_last=True)
        .select(*SHOE_KEY, "rules", "source", "open", "coups", "banker", "player", "tie",
                "banker_pairs", "player_pairs", "naturals", "outcomes")
    )
