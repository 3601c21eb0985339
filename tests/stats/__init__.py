"""Helpers of the statistics tests."""


from pathlib import Path

import polars as pl

from roads.ingest.readers import ReadOptions
from roads.ingest.run import ingest
from roads.rules import get_rules
from roads.store import Store


def import_cards(store: Store, coups: pl.DataFrame, table: str, csv: Path,
                 shoe: str | None = None) -> None:
    """Card-level coups imported under another table (and shoe id, if given): a file of
    their own in the store."""
    coups.select(pl.lit(table).alias("table"),
                 pl.lit(shoe).alias("shoe_id") if shoe else "shoe_id", "coup",
                 pl.col("outcome").cast(pl.String),
                 pl.col("player_cards").cast(pl.List(pl.String)).list.join(" "),
                 pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" "),
                 pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ")).write_csv(csv)
    ingest([csv], store, ReadOptions(), get_rules("standard-8"))
__all__ = ["import_cards"]
