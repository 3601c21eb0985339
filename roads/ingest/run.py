"""An ingest run: read each file, validate, set aside what conflicts, store, report.

Crash-atomic: the run's part files, flags, quarantine and report are written first, under
the run's id, and become visible together when one ``import_committed`` event journals them
(with their digests) and the input files' digests (the registry of what was ingested). A run
killed at any point leaves only files no reader sees; the next run removes them and, since
nothing of the killed run was committed, ingests the same input again — every coup and shoe
row once.

Idempotent twice over: a file whose digest a committed run already ingested is skipped, and
a coup already stored with the same content is not added again; a stored coup with different
content is a *conflict*, quarantined and reported, never overwritten; so is a coup of a
shoe the journal holds as a live shoe (open or sealed): an import never adds a second copy
of a live shoe.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from roads.errors import InputError
from roads.faults import point
from roads.files import publish, publish_text, sha256
from roads.ingest.fastcsv import parse_csv, read_bytes
from roads.ingest.readers import ReadOptions, detect_format, raw_rows, read
from roads.ingest.validate import QUARANTINE_SCHEMA, Parsed, check, parse_staged
from roads.rules import RuleSet
from roads.schema import CONTENT, COUP_KEY, SHOE_KEY, SHOES, conform, same_content
from roads.store import Store, Written

CONFLICT = "conflicts with the stored coup (different content)"
LIVE_SHOE = "the shoe is a live shoe of the journal (open or sealed); an import never adds to it"
ATTACHMENTS = {"ingest": ".json", "quarantine": ".jsonl", "flags": ".parquet"}


@dataclass(frozen=True)
class IngestResult:
    report: dict[str, Any]
    report_path: Path

    @property
    def quarantined(self) -> int:
        return int(self.report["totals"]["quarantined"])


def ingested(store: Store) -> dict[str, str]:
    """Input digest -> run, for every input a committed run ingested."""
    return {i["sha256"]: e.payload["run"] for e in store.journal.of_kinds(("import_committed",))
            for i in e.payload.get("inputs", []) if "sha256" in i and "skipped" not in i}


def _sweep(store: Store) -> list[str]:
    """Leftovers of runs that never committed: their part files and attachments."""
    gone = store.sweep(("import",))
    committed = {e.payload["run"] for e in store.journal.of_kinds(("import_committed",))}
    for folder, suffix in ATTACHMENTS.items():
        directory = store.root / folder
        if not directory.is_dir():
            continue
        for path in directory.glob(f"*{suffix}"):
            if path.stem not in committed:
                path.unlink(missing_ok=True)
                gone.append(path.relative_to(store.root).as_posix())
    return gone


def _split_conflicts(store: Store, coups: pl.DataFrame, live: set[tuple[str, str]]
                     ) -> tuple[pl.DataFrame, int, pl.DataFrame, pl.DataFrame]:
    """(new coups, how many were already stored identically, coups that conflict with a
    stored coup, coups of live shoes)."""
    empty = coups.clear()
    if coups.is_empty():
        return coups, 0, empty, empty
    keys = coups.select(*SHOE_KEY).unique()
    on_live = keys.filter(pl.struct(*SHOE_KEY).is_in(
        pl.DataFrame(list(live), schema=dict.fromkeys(SHOE_KEY, pl.String), orient="row")
        .select(pl.struct(*SHOE_KEY)).to_series().implode())) if live else keys.clear()
    live_rows = coups.join(on_live, on=list(SHOE_KEY), how="semi") if on_live.height else empty
    if on_live.height:
        coups = coups.join(on_live, on=list(SHOE_KEY), how="anti")
    stored = store.read.stored_coups(keys.join(on_live, on=list(SHOE_KEY), how="anti"))
    if stored.is_empty():
        return coups, 0, empty, live_rows
    stored = stored.select(*COUP_KEY, *CONTENT)
    both = coups.join(stored, on=list(COUP_KEY), how="inner", suffix="_stored")
    same = same_content()
    conflicts = both.filter(~same).select(*COUP_KEY)
    return (coups.join(stored.select(*COUP_KEY), on=list(COUP_KEY), how="anti"),
            both.filter(same).height,
            coups.join(conflicts, on=list(COUP_KEY), how="semi"), live_rows)


def _shoe_rows(store: Store, coups: pl.DataFrame, rules: RuleSet,
               totals: pl.DataFrame | None = None) -> pl.DataFrame:
    """A ``shoes`` row for every imported shoe the store does not know yet.

    ``totals``: the shoes' totals if the caller has them for exactly these coups (the
    validation pass counts them, :attr:`Validated.shoes`); else they are grouped here."""
    if totals is None:
        totals = shoe_totals(coups)
    known = store.read.stored_shoe_keys()
    shoes = totals.join(known, on=list(SHOE_KEY), how="anti").with_columns(
        pl.lit(rules.name).alias("rules"), pl.lit(rules.decks).cast(pl.Int8).alias("decks"),
        pl.lit("import").alias("source"))
    return conform(shoes, "shoes") if not shoes.is_empty() else pl.DataFrame(schema=SHOES)


def shoe_totals(coups: pl.DataFrame) -> pl.DataFrame:
    """Per shoe of canonical coups: table_id, shoe_id and SHOE_TOTALS, by grouping."""
    return coups.group_by(*SHOE_KEY, maintain_order=True).agg(
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


def _rejected_rows(path: Path, rows: pl.DataFrame, reason: str) -> pl.DataFrame:
    return rows.select(
        pl.lit(str(path)).alias("file"), pl.lit(None, dtype=pl.Int64).alias("row"),
        pl.lit("shoe_id" if reason == LIVE_SHOE else "coup").alias("field"),
        pl.lit(reason).alias("reason"),
        pl.struct(pl.all()).struct.json_encode().alias("raw")).cast(
        QUARANTINE_SCHEMA)  # type: ignore[arg-type]


def ingest(paths: list[Path], store: Store, options: ReadOptions, rules: RuleSet,
           progress: Callable[[Path], None] | None = None,
           actor: str = "cli") -> IngestResult:
    """Ingest files into the store; returns the report (also written as JSON)."""
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise InputError(f"{missing[0]}: no such file")
    files: list[dict[str, Any]] = []
    quarantine: list[pl.DataFrame] = []
    flags: list[pl.DataFrame] = []
    written: list[Written] = []
    with store.bulk_lock():
        swept = _sweep(store)
        seen = ingested(store)
        live = store.read.journal_shoes()
        for number, path in enumerate(paths):
            with ThreadPoolExecutor(max_workers=1) as hasher:
                fmt = options.format if options.format != "auto" else detect_format(path)
                parsed, pending, parser = _parse(path, fmt, options, hasher)
                checked = check(parsed, rules.decks)
                digest = pending.result()
            point("ingest:parsed")
            entry: dict[str, Any] = {"file": str(path), "sha256": digest}
            if digest in seen:
                files.append({**entry, "skipped": f"already ingested (run {seen[digest]})",
                              "rows_read": 0, "accepted": 0, "quarantined": 0})
                if progress:
                    progress(path)
                continue
            new, already, conflicts, on_live = _split_conflicts(store, checked.coups, live)
            if not new.is_empty():
                whole = new is checked.coups  # no coup set aside: the check's totals hold
                shoes = _shoe_rows(store, new, rules, checked.shoes if whole else None)
                meta = {"input_file": path.name, "input_sha256": digest, "ingest_run": run_id,
                        "rules": rules.name}
                parts = store.parts_by_day(new.with_columns(pl.lit(actor).alias("entered_by")),
                                           shoes, "import", (run_id, str(number)), meta,
                                           checked.starts if whole else None)
                written += store.write_parts(parts, "import")
                point("ingest:parts-written")
            rejected = pl.concat([checked.quarantine, _rejected_rows(path, conflicts, CONFLICT),
                                  _rejected_rows(path, on_live, LIVE_SHOE)])
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
                    checked.coups.join(new, on=list(COUP_KEY), how="anti").select(*COUP_KEY),
                    on=list(COUP_KEY), how="anti", nulls_equal=False)
            flags.append(row_flags)
            files.append({
                **entry, "format": fmt, "parser": parser, "rows_read": parsed.rows.height,
                "accepted": new.height, "already_stored": already,
                "duplicate_rows": checked.duplicates,
                "flagged": checked.flags.select(*COUP_KEY).unique().height,
                "flags_by_rule": _counts(checked.flags, "rule"),
                "quarantined": rejected.height,
                "quarantined_by_reason": _counts(rejected, "reason"),
                "conflicts": conflicts.height + on_live.height,
            })
            seen[digest] = run_id
            if progress:
                progress(path)
        attachments = _attachments(store, run_id, quarantine, flags)
        totals = {k: sum(int(f.get(k, 0)) for f in files)
                  for k in ("rows_read", "accepted", "quarantined", "flagged")}
        report = {"run": run_id, "store": str(store.root), "rules": rules.name, "files": files,
                  "totals": totals, "swept": swept}
        report_path = store.root / "ingest" / f"{run_id}.json"
        publish_text(report_path, json.dumps(report, indent=2, ensure_ascii=False))
        point("ingest:before-commit")
        store.commit("import_committed", written, {
            "run": run_id, "rules": rules.name, "totals": totals,
            "inputs": [{k: f[k] for k in ("file", "sha256", "skipped") if k in f}
                       for f in files],
            "attachments": {**attachments,
                            "report": {"path": f"ingest/{run_id}.json",
                                       "sha256": sha256(report_path)}}}, actor)
    return IngestResult(report, report_path)


def _attachments(store: Store, run_id: str, quarantine: list[pl.DataFrame],
                 flags: list[pl.DataFrame]) -> dict[str, dict[str, Any]]:
    """The run's quarantine (JSON lines, rows verbatim) and flags (Parquet), published
    under the run's id; their digests go into the run's journal event."""
    out: dict[str, dict[str, Any]] = {}
    rejected = pl.concat(quarantine) if quarantine else pl.DataFrame(schema=QUARANTINE_SCHEMA)
    if not rejected.is_empty():
        path = store.root / "quarantine" / f"{run_id}.jsonl"
        publish_text(path, "".join(json.dumps({**r, "run": run_id}, ensure_ascii=False) + "\n"
                                   for r in rejected.to_dicts()))
        out["quarantine"] = {"path": f"quarantine/{run_id}.jsonl", "rows": rejected.height,
                             "sha256": sha256(path)}
        point("ingest:quarantine-written")
    found = pl.concat(flags) if flags else None
    if found is not None and not found.is_empty():
        path = store.root / "flags" / f"{run_id}.parquet"
        publish(path, found.write_parquet)
        out["flags"] = {"path": f"flags/{run_id}.parquet", "rows": found.height,
                        "sha256": sha256(path)}
    return out


def _counts(frame: pl.DataFrame, column: str) -> dict[str, int]:
    if frame.is_empty():
        return {}
    return {str(k): int(v) for k, v in frame.group_by(column).len().iter_rows()}
