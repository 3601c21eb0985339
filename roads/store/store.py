"""The store: canonical Parquet partitioned by date, the live journal beside it, one read API.

Layout under the store root::

    coups/date=YYYY-MM-DD/part-*.parquet    canonical coups (date = the UTC day the shoe began)
    shoes/date=YYYY-MM-DD/part-*.parquet    canonical shoes
    journal.sqlite                          the live journal (hash-chained events)
    ingest/ quarantine/ flags/              ingest reports, rejected rows, rule findings

Sealed Parquet holds coups as they were entered; corrections live only in the journal and are
applied by :meth:`Store.read_coups` — the one place that applies amendments — so the
originals stay queryable (``originals=True``).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from roads.files import publish, publish_text
from roads.store.parquet import (
    COMPRESSION,
    COMPRESSION_LEVEL,
    AtomicParquetWriter,
    file_metadata,
    live_parts,
    scan,
)
from roads.rules import get_rules
from roads.schema import COUPS, SHOES, conform, provenance, shoe_runs
from roads.store.journal import Event, Journal

UNDATED = "undated"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _safe(name: str) -> str:
    return _SAFE.sub("_", name)[:80]


def _parse_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


class Store:
    """One store directory: Parquet dataset + journal."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.journal = Journal(root / "journal.sqlite")

    # -- writing Parquet --------------------------------------------------------------------
    def append(self, coups: pl.DataFrame, shoes: pl.DataFrame | None,
               metadata: dict[str, Any], name: str | None = None,
               starts: np.ndarray | None = None) -> list[Path]:
        """Write canonical rows into date partitions; one new part file per date and table.

        ``name`` (a stable stem) makes the write idempotent: writing the same stem again
        replaces those files instead of adding rows. ``starts``: the coups' shoe runs when
        the caller knows each shoe to be one run (:func:`roads.schema.shoe_runs`).
        """
        stem = _safe(name) if name else uuid.uuid4().hex
        written = []
        coups = conform(coups, "coups")
        # A shoe is filed under the day its first coup was dealt (a shoe past midnight stays
        # in one file); shoes take the day of their coups, or their own start.
        row_days, shoe_days = _shoe_days(coups, starts)
        jobs = []
        for table, frame in (("coups", coups),
                             ("shoes", conform(shoes, "shoes") if shoes is not None else None)):
            if frame is None or frame.is_empty():
                continue
            if table == "coups":
                dated = frame.with_columns(row_days)
            else:
                dated = frame.join(shoe_days, on=["table_id", "shoe_id"], how="left",
                                   maintain_order="left").with_columns(
                    pl.coalesce("day", pl.col("started_at").dt.date()).alias("day"))
            meta = provenance(table=table, **metadata)
            for (d,), part in dated.partition_by("day", maintain_order=True, include_key=False,
                                                 as_dict=True).items():
                label = d.isoformat() if isinstance(d, date) else UNDATED
                path = self.root / table / f"date={label}" / f"part-{stem}.parquet"
                jobs.append((path, part, meta))
                written.append(path)
        # One file per day and table; the writes (and their fsyncs) run side by side.
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda job: _write(*job), jobs))
        return written

    # -- sealing live shoes -----------------------------------------------------------------
    def shoe_frames(self, events: list[Event]) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Canonical coups (as entered) and the shoe row of one journaled shoe."""
        opened = next(e for e in events if e.kind == "shoe_opened")
        entered = [e for e in events if e.kind == "coup_entered"]
        rows = [{
            "table_id": e.table_id, "shoe_id": e.shoe_id, "coup": e.payload["coup"],
            "outcome": e.payload["outcome"], "player_cards": e.payload.get("player_cards"),
            "banker_cards": e.payload.get("banker_cards"),
            "player_total": e.payload.get("player_total"),
            "banker_total": e.payload.get("banker_total"), "natural": e.payload.get("natural"),
            "player_pair": e.payload.get("player_pair"),
            "banker_pair": e.payload.get("banker_pair"),
            "dealt_at": _parse_time(e.payload.get("dealt_at")), "source": "live",
        } for e in entered]
        coups = conform(pl.DataFrame(rows, schema_overrides={
            "dealt_at": pl.Datetime("us", "UTC"), "player_cards": pl.List(pl.String),
            "banker_cards": pl.List(pl.String)}, infer_schema_length=None)
            if rows else pl.DataFrame(schema=COUPS), "coups")
        rules = get_rules(opened.payload["rules"])
        cards = [len(r["player_cards"]) + len(r["banker_cards"]) for r in rows
                 if r["player_cards"] is not None]
        times = [r["dealt_at"] for r in rows if r["dealt_at"] is not None]
        shoe = conform(pl.DataFrame([{
            "table_id": opened.table_id, "shoe_id": opened.shoe_id, "rules": rules.name,
            "decks": rules.decks, "burn_cards": opened.payload.get("burn_cards"),
            "cut_card_index": opened.payload.get("cut_card_index"), "coups": len(rows),
            "cards_dealt": sum(cards) if len(cards) == len(rows) and rows else None,
            "started_at": min(times) if times else _parse_time(opened.at),
            "ended_at": max(times) if times else None, "seed": None, "source": "live",
        }], schema_overrides={"burn_cards": pl.List(pl.String),
                              "started_at": pl.Datetime("us", "UTC"),
                              "ended_at": pl.Datetime("us", "UTC")}), "shoes")
        return coups, shoe

    def seal(self, table_id: str, shoe_id: str) -> list[Path]:
        """Write a closed shoe's coups and shoe row to Parquet; journal that it was sealed.

        The part name derives from the table and shoe, so sealing again (after a crash
        between the write and the journal entry) replaces the files instead of duplicating.
        """
        events = self.journal.events(table_id, shoe_id)
        if not any(e.kind == "shoe_closed" for e in events):
            raise ValueError(f"shoe {shoe_id} at table {table_id} is not closed")
        coups, shoe = self.shoe_frames(events)
        paths = self.append(coups, shoe, {"source": "live"}, name=f"live-{table_id}-{shoe_id}")
        self.journal.append("shoe_sealed", table_id, shoe_id,
                            {"files": [str(p.relative_to(self.root)) for p in paths]})
        return paths

    def seal_pending(self) -> list[tuple[str, str]]:
        """Seal every closed shoe whose seal did not complete (e.g. after a crash)."""
        closed: dict[tuple[str, str], bool] = {}
        for e in self.journal.events():
            if e.shoe_id is None:
                continue
            if e.kind == "shoe_closed":
                closed[(e.table_id, e.shoe_id)] = False
            elif e.kind == "shoe_sealed":
                closed[(e.table_id, e.shoe_id)] = True
        pending = [key for key, sealed in closed.items() if not sealed]
        for table_id, shoe_id in pending:
            self.seal(table_id, shoe_id)
        return pending

    def unsealed_coups(self, events: list[Event]) -> list[pl.DataFrame]:
        """Coups (as entered) of every journaled shoe not yet sealed into Parquet."""
        sealed = {(e.table_id, e.shoe_id) for e in events if e.kind == "shoe_sealed"}
        by_shoe: dict[tuple[str, str], list[Event]] = {}
        for e in events:
            if e.shoe_id is not None and (e.table_id, e.shoe_id) not in sealed:
                by_shoe.setdefault((e.table_id, e.shoe_id), []).append(e)
        return [self.shoe_frames(shoe_events)[0] for shoe_events in by_shoe.values()
                if any(e.kind == "shoe_opened" for e in shoe_events)]

    # -- the one read API -------------------------------------------------------------------
    def read_coups(self, table_id: str | None = None, shoe_id: str | None = None,
                   originals: bool = False) -> pl.DataFrame:
        """A table's (or shoe's) coups from Parquet and the journal alike, in coup order.

        Corrections from the journal are applied (voided coups removed, amended coups
        replaced) unless ``originals`` is set.
        """
        lazy = scan(self.root, "coups")
        if table_id is not None:
            lazy = lazy.filter(pl.col("table_id") == table_id)
        if shoe_id is not None:
            lazy = lazy.filter(pl.col("shoe_id") == shoe_id)
        events = self.journal.events(table_id, shoe_id)
        coups = pl.concat([lazy.collect(), *self.unsealed_coups(events)])
        if not originals:
            coups = apply_corrections(coups, events)
        return coups.sort("table_id", "shoe_id", "coup")

    def read_shoes(self) -> pl.DataFrame:
        return scan(self.root, "shoes").collect()

    # -- maintenance ------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """Partitions, files, rows and bytes per table; the journal's head and chain state."""
        result: dict[str, Any] = {"root": str(self.root)}
        for table in ("coups", "shoes"):
            parts = sorted((self.root / table).glob("date=*"))
            files = [f for p in parts for f in live_parts(p)]
            flat = live_parts(self.root / table)
            files += flat
            rows = scan(self.root, table).select(pl.len()).collect().item() if files else 0
            result[table] = {"partitions": len(parts), "files": len(files), "rows": rows,
                             "bytes": sum(f.stat().st_size for f in files)}
        seq, head = self.journal.head()
        check = self.journal.verify()
        result["journal"] = {"events": seq, "head": head, "chain_ok": check.ok,
                             "problem": check.reason}
        return result

    def compact(self, before: date | None = None) -> dict[str, int]:
        """Merge each closed day's part files (days before ``before``, default today UTC).

        Crash-safe: the merged file is written hidden, a ``_compaction.json`` names it and
        the parts it replaces, then it is published and the old parts removed; readers skip
        replaced parts while that note exists, and the next compaction finishes an
        interrupted one.
        """
        before = before or datetime.now(UTC).date()
        merged = removed = 0
        for table in ("coups", "shoes"):
            for partition in sorted((self.root / table).glob("date=*")):
                label = partition.name.removeprefix("date=")
                _finish_compaction(partition)
                if label == UNDATED or date.fromisoformat(label) >= before:
                    continue
                parts = live_parts(partition)
                if len(parts) < 2:
                    continue
                frame = pl.read_parquet(parts, schema=pl.Schema(COUPS if table == "coups"
                                                               else SHOES))
                keys = ["table_id", "shoe_id", *(["coup"] if table == "coups" else [])]
                name = f"part-compact-{uuid.uuid4().hex}.parquet"
                hidden = partition / f".pending-{name}"
                meta = {**file_metadata(parts[0]), "roads.compacted_from": str(len(parts))}
                with AtomicParquetWriter(hidden, table, meta) as writer:
                    writer.write(frame.sort(keys).to_arrow())
                publish_text(partition / "_compaction.json",
                             json.dumps({"new": name, "old": [p.name for p in parts]}))
                _finish_compaction(partition)
                merged += 1
                removed += len(parts)
        return {"partitions_compacted": merged, "files_replaced": removed}


def _shoe_days(coups: pl.DataFrame, starts: np.ndarray | None = None
               ) -> tuple[pl.Series, pl.DataFrame]:
    """Each row's shoe's first day, and each shoe's (table_id, shoe_id, day).

    Rows usually come shoe by shoe: then each run of rows is one shoe and its earliest time
    is a reduction over the run (no hashing). ``starts``: the runs, if the caller knows."""
    keys = ["table_id", "shoe_id"]
    if starts is None:
        starts = shoe_runs(coups) if coups.height else None
    times = coups["dealt_at"]
    if starts is None or times.null_count():
        day = pl.col("dealt_at").min().dt.date().alias("day")
        return (coups.select(day.over(keys)).to_series(),
                coups.group_by(keys).agg(day))
    first = np.flatnonzero(starts)
    shoes = coups.select(keys)[first]
    earliest = pl.Series("day", np.minimum.reduceat(times.dt.epoch("us").to_numpy(), first))
    earliest = earliest.cast(pl.Datetime("us", "UTC")).dt.date()
    runs = np.diff(np.r_[first, len(starts)])
    return (pl.Series("day", np.repeat(earliest.to_numpy(), runs), dtype=pl.Date),
            shoes.with_columns(earliest))


def _write(path: Path, frame: pl.DataFrame, meta: dict[str, str]) -> None:
    """One part file of an already conformed ``frame``, published atomically. polars'
    writer encodes the columns in parallel (half the time of a pyarrow writer here) and
    keeps the Enum types; the provenance goes into the key/value metadata as with every
    other writer."""
    publish(path, lambda tmp: frame.write_parquet(
        tmp, compression=COMPRESSION, compression_level=COMPRESSION_LEVEL, statistics=True,
        metadata=meta))


def _finish_compaction(partition: Path) -> None:
    """Complete an interrupted compaction: publish the merged file, drop the old parts."""
    note = partition / "_compaction.json"
    if not note.exists():
        return
    plan = json.loads(note.read_text())
    hidden = partition / f".pending-{plan['new']}"
    if hidden.exists():
        os.replace(hidden, partition / plan["new"])
    if (partition / plan["new"]).exists():
        for old in plan["old"]:
            (partition / old).unlink(missing_ok=True)
    note.unlink()


def apply_corrections(coups: pl.DataFrame, events: list[Event]) -> pl.DataFrame:
    """Apply journaled voids and amendments, in journal order (the only place that does)."""
    corrections = [e for e in events if e.kind in ("coup_voided", "coup_amended")]
    if not corrections:
        return coups
    keys = pl.DataFrame(
        [{"table_id": e.table_id, "shoe_id": e.shoe_id, "coup": e.payload["coup"]}
         for e in corrections], schema={"table_id": pl.String, "shoe_id": pl.String,
                                        "coup": pl.Int32}).unique()
    on = ["table_id", "shoe_id", "coup"]
    untouched = coups.join(keys, on=on, how="anti")
    touched = coups.join(keys, on=on, how="semi")
    rows = {(r["table_id"], r["shoe_id"], r["coup"]): r for r in touched.to_dicts()}
    for e in corrections:
        key = (e.table_id, e.shoe_id, e.payload["coup"])
        if e.kind == "coup_voided":
            rows.pop(key, None)
        elif key in rows:
            new = dict(e.payload["new"])
            new["dealt_at"] = rows[key]["dealt_at"]  # a correction does not move the coup
            rows[key] = {**rows[key], **new}
    if not rows:
        return untouched
    fixed = conform(pl.DataFrame(
        [{**r, "outcome": str(r["outcome"]), "source": str(r["source"])} for r in rows.values()],
        schema_overrides={"player_cards": pl.List(pl.String),
                          "banker_cards": pl.List(pl.String),
                          "dealt_at": pl.Datetime("us", "UTC")},
        infer_schema_length=None), "coups")
    return pl.concat([untouched, fixed])
