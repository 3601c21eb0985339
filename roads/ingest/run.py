"""An ingest run: read each file, validate, set aside what conflicts, store, report.

Idempotent twice over: a file whose digest was already ingested is skipped, and a coup
already stored with the same content is not added again; a stored coup with different
content is a *conflict*, quarantined and reported, never overwritten. Every output file is
published atomically, so a run killed at any point leaves a readable store; running it again
completes it (part files are named after the input's digest, so nothing is duplicated).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from roads.errors import InputError
from roads.files import publish, publish_text, sha256
from roads.ingest.fastcsv import parse_csv, read_bytes
from roads.ingest.readers import ReadOptions, detect_format, raw_rows, read
from roads.ingest.validate import QUARANTINE_SCHEMA, Parsed, check, parse_staged
from roads.store.parquet import parts, scan
from roads.rules import RuleSet
from roads.schema import SHOES, conform
from roads.store.store import Store

_CONTENT = ["outcome", "player_cards", "banker_cards", "player_total", "banker_total"]


@contextmanager
def _locked(store: Store) -> Iterator[None]:
    """One ingest at a time per store (the registry and conflict checks need it)."""
    path = store.root / "ingest" / ".lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _registry(store: Store) -> dict[str, dict[str, Any]]:
    path = store.root / "ingest" / "registry.jsonl"
    if not path.exists():
        return {}
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {e["digest"]: e for e in entries}


def _register(store: Store, entry: dict[str, Any]) -> None:
    path = store.root / "ingest" / "registry.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


@dataclass(frozen=True)
class IngestResult:
    report: dict[str, Any]
    report_path: Path

    @property
    def quarantined(self) -> int:
        return int(self.report["totals"]["quarantined"])


def _split_conflicts(store: Store, coups: pl.DataFrame) -> tuple[pl.DataFrame, int, pl.DataFrame]:
    """(new coups, how many were already stored identically, conflicting coups)."""
    if coups.is_empty() or not parts(store.root, "coups"):
        return coups, 0, coups.clear()
    shoes = coups.select("table_id", "shoe_id").unique()
    stored = (scan(store.root, "coups").join(shoes.lazy(), on=["table_id", "shoe_id"],
                                             how="semi")
              .select("table_id", "shoe_id", "coup", *_CONTENT).collect())
    if stored.is_empty():
        return coups, 0, coups.clear()
    key = ["table_id", "shoe_id", "coup"]
    both = coups.join(stored, on=key, how="inner", suffix="_stored")
    same = pl.all_horizontal(
        [pl.col(c).eq_missing(pl.col(f"{c}_stored")) for c in _CONTENT])
    conflicts = both.filter(~same).select(key)
    return (coups.join(stored.select(key), on=key, how="anti"),
            both.filter(same).height,
            coups.join(conflicts, on=key, how="semi"))


def _shoe_rows(store: Store, coups: pl.DataFrame, rules: RuleSet,
               totals: pl.DataFrame | None = None) -> pl.DataFrame:
    """A ``shoes`` row for every imported shoe the store does not know yet.

    ``totals``: the shoes' totals if the caller has them for exactly these coups (the
    validation pass counts them, :attr:`Validated.shoes`); else they are grouped here."""
    if totals is None:
        totals = shoe_totals(coups)
    known = scan(store.root, "shoes").select("table_id", "shoe_id").collect()
    shoes = totals.join(known, on=["table_id", "shoe_id"], how="anti").with_columns(
        pl.lit(rules.name).alias("rules"), pl.lit(rules.decks).cast(pl.Int8).alias("decks"),
        pl.lit("import").alias("source"))
    return conform(shoes, "shoes") if not shoes.is_empty() else pl.DataFrame(schema=SHOES)


def shoe_totals(coups: pl.DataFrame) -> pl.DataFrame:
    """Per shoe of canonical coups: table_id, shoe_id and SHOE_TOTALS, by grouping."""
    return coups.group_by("table_id", "shoe_id", maintain_order=True).agg(
        pl.len().cast(pl.Int16).alias("coups"),
        pl.col("dealt_at").min().alias("started_at"),
        pl.col("dealt_at").max().alias("ended_at"),
        pl.when(pl.col("player_cards").is_not_null().all())
        .then((pl.col("player_cards").list.len() + pl.col("banker_cards").list.len()).sum())
        .cast(pl.Int16).alias("cards_dealt"))


def _parse(path: Path, fmt: str, options: ReadOptions, hasher: ThreadPoolExecutor
           ) -> tuple[Parsed, Future[str], str]:
    """The file's parsed rows, its SHA-256 digest (computed beside the parsing; hashlib
    frees the GIL) and which front end read it. A CSV file is parsed straight from its bytes
    when it is plain (the usual export), else through the reader of its format: both give
    the same rows."""
    how = "general"
    if fmt == "csv":
        data = read_bytes(path)
        digest = hasher.submit(lambda: hashlib.sha256(data.data).hexdigest())
        attempt = parse_csv(path, options, data)
        if attempt.parsed is not None:
            return attempt.parsed, digest, "plain CSV"
        how = f"general ({attempt.why})"
    else:
        digest = hasher.submit(sha256, path)
    return parse_staged(read(path, options)), digest, how


def ingest(paths: list[Path], store: Store, options: ReadOptions, rules: RuleSet,
           progress: Callable[[Path], None] | None = None) -> IngestResult:
    """Ingest files into the store; returns the report (also written as JSON)."""
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    files: list[dict[str, Any]] = []
    quarantine: list[pl.DataFrame] = []
    flags: list[pl.DataFrame] = []
    with _locked(store):
        seen = _registry(store)
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise InputError(f"{missing[0]}: no such file")
        for path in paths:
            # A file already ingested (same digest) is skipped before anything is written.
            with ThreadPoolExecutor(max_workers=1) as hasher:
                fmt = options.format if options.format != "auto" else detect_format(path)
                parsed, pending, parser = _parse(path, fmt, options, hasher)
                checked = check(parsed, rules.decks)
                digest = pending.result()
            entry: dict[str, Any] = {"file": str(path), "digest": digest}
            if digest in seen:
                files.append({**entry, "skipped": f"already ingested (run {seen[digest]['run']})",
                              "rows_read": 0, "accepted": 0, "quarantined": 0})
                if progress:
                    progress(path)
                continue
            new, already, conflicts = _split_conflicts(store, checked.coups)
            conflict_rows = (
                conflicts.select(pl.lit(str(path)).alias("file"),
                                 pl.lit(None, dtype=pl.Int64).alias("row"),
                                 pl.lit("coup").alias("field"),
                                 pl.lit("conflicts with the stored coup (different content)")
                                 .alias("reason"),
                                 pl.struct(pl.all()).struct.json_encode().alias("raw"))
                .cast(QUARANTINE_SCHEMA))  # type: ignore[arg-type]
            stem = f"import-{digest[:20]}"
            if not new.is_empty():
                whole = new is checked.coups  # no coup set aside: the check's totals hold
                starts = checked.starts if whole else None
                store.append(new, _shoe_rows(store, new, rules, checked.shoes if whole else None),
                             {"source": "import", "input_file": path.name,
                              "input_sha256": digest, "ingest_run": run_id,
                              "rules": rules.name}, name=stem, starts=starts)
            rejected = pl.concat([checked.quarantine, conflict_rows])
            if fmt == "csv" and rejected["row"].drop_nulls().len():
                # CSV rows are kept verbatim under their own column names.
                verbatim = raw_rows(path, rejected["row"].drop_nulls().to_list())
                rejected = rejected.with_columns(
                    pl.col("row").replace_strict(verbatim, default=None, return_dtype=pl.String)
                    .fill_null(pl.col("raw")).alias("raw"))
            quarantine.append(rejected)
            row_flags = checked.flags
            if new.height != checked.coups.height:  # keep only the flags of stored coups
                row_flags = row_flags.join(
                    checked.coups.join(new, on=["table_id", "shoe_id", "coup"], how="anti")
                    .select("table_id", "shoe_id", "coup"),
                    on=["table_id", "shoe_id", "coup"], how="anti", nulls_equal=False)
            flags.append(row_flags)
            report = {
                **entry, "format": fmt, "parser": parser, "rows_read": parsed.rows.height,
                "accepted": new.height,
                "already_stored": already, "duplicate_rows": checked.duplicates,
                "flagged": checked.flags.select("table_id", "shoe_id", "coup").unique().height,
                "flags_by_rule": _counts(checked.flags, "rule"),
                "quarantined": rejected.height,
                "quarantined_by_reason": _counts(rejected, "reason"),
                "conflicts": conflicts.height,
            }
            files.append(report)
            _register(store, {**entry, "run": run_id})
            seen[digest] = {"run": run_id}
            if progress:
                progress(path)
        all_quarantine = pl.concat(quarantine) if quarantine else pl.DataFrame(
            schema=QUARANTINE_SCHEMA)
        if not all_quarantine.is_empty():
            publish_text(store.root / "quarantine" / f"{run_id}.jsonl",
                          "".join(json.dumps({**r, "run": run_id}, ensure_ascii=False) + "\n"
                                  for r in all_quarantine.to_dicts()))
        all_flags = pl.concat(flags) if flags else None
        if all_flags is not None and not all_flags.is_empty():
            publish(store.root / "flags" / f"{run_id}.parquet", all_flags.write_parquet)
        totals = {k: sum(int(f.get(k, 0)) for f in files)
                  for k in ("rows_read", "accepted", "quarantined")}
        totals["flagged"] = sum(int(f.get("flagged", 0)) for f in files)
        report = {"run": run_id, "store": str(store.root), "rules": rules.name, "files": files,
                  "totals": totals}
        report_path = store.root / "ingest" / f"{run_id}.json"
        publish_text(report_path, json.dumps(report, indent=2, ensure_ascii=False))
    return IngestResult(report, report_path)


def _counts(frame: pl.DataFrame, column: str) -> dict[str, int]:
    if frame.is_empty():
        return {}
    return {str(k): int(v) for k, v in frame.group_by(column).len().iter_rows()}
