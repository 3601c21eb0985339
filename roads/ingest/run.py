"""An ingest run: read each file, validate, set aside what conflicts, store, report.

Crash-atomic: the run's part files, flags, quarantine and report are written first, under
the run's id, and become visible together when one ``import_committed`` event journals them
(with their digests) and the input files' digests (the registry of what was ingested). A run
killed at any point leaves only files no reader sees; the next run removes them and, since
nothing of the killed run was committed, ingests the same input again — every coup and shoe
row once.

Idempotent twice over: a file whose digest a committed run already ingested is skipped, and
a coup already stored with the same content (by an earlier run or an earlier file of this
one) is not added again; a stored coup with different content is a *conflict*, quarantined
and reported, never overwritten; so is a coup of a shoe the journal holds as a live shoe
(open or sealed): an import never adds a second copy of a live shoe.

``replace=True`` (``roads ingest --replace``) imports a file again even if it was ingested,
and turns each conflict into an amendment: a ``coup_amended`` event journaled in the run's
commit transaction (before its ``import_committed`` event), so readers apply it like any
correction and the old row stays in its file as the original. Voided coups stay void;
stored coups the file does not hold are left alone; live shoes are never touched.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from roads.errors import InputError
from roads.faults import point
from roads.files import publish, publish_text, sha256
from roads.ingest.chunks import Spill, chunked, remove_spill, spill_file
from roads.ingest.chunks import sweep as sweep_spills
from roads.ingest.fastcsv import parse_csv, read_bytes
from roads.ingest.ragged import RAGGED_FIELD
from roads.ingest.readers import (
    ReadOptions,
    check_header,
    columns_of,
    detect_format,
    raw_rows,
    read,
)
from roads.ingest.validate import QUARANTINE_SCHEMA, Parsed, check, parse_staged
from roads.rules import RuleSet
from roads.schema import CONTENT, COUP_KEY, COUPS, SHOE_KEY, SHOES, conform, same_content
from roads.store import (
    ATTACHMENTS,
    MARK,
    Preceding,
    StagedRows,
    Store,
    Written,
    apply_corrections,
)

CONFLICT = "conflicts with the stored coup (different content)"
LIVE_SHOE = "the shoe is a live shoe of the journal (open or sealed); an import never adds to it"


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


@contextmanager
def _nothing_left_on_failure(store: Store) -> Iterator[None]:
    """A run that fails (a later file that cannot be read, a full disk) removes the parts
    and attachments it wrote at once, under its lock: left for the next run's sweep, they
    made ``store verify`` fail ("no committed journal event names this file") after an
    ingest that had said it stored nothing. (A killed run's are swept by the next run.)"""
    try:
        yield
    except BaseException:
        with suppress(Exception):  # (the first error is the one to show; the next run sweeps)
            _sweep(store)
        raise


def _sweep(store: Store) -> list[str]:
    """Leftovers of runs that never committed: their part files and attachments."""
    gone = store.sweep(("import",)) + sweep_spills(store.root)
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


@dataclass(frozen=True)
class Sorted:
    """One file's coups against what the store (and this run's earlier files) holds."""

    new: pl.DataFrame        # not stored yet: this run stores them
    already: int             # stored with the same content
    conflicts: pl.DataFrame  # stored with different content: quarantined
    amended: pl.DataFrame    # the same, with --replace: journaled as amendments instead
    kept_void: int           # with --replace: stored coups a correction voided (left void)
    on_live: pl.DataFrame    # coups of live shoes: quarantined


def _sort(store: Store, coups: pl.DataFrame, live: set[tuple[str, str]],
          earlier: pl.DataFrame, replace: bool, keys: pl.DataFrame | None = None) -> Sorted:
    """Split a file's canonical coups by what is stored under their keys. ``earlier``: the
    content this run gives coups so far (``COUP_KEY`` + ``CONTENT``), which wins over the
    store's. With ``replace``, stored coups are compared as they read now (corrections
    applied), since that is what an amendment changes. ``keys``: the coups' shoes
    (``SHOE_KEY``), if the caller has them (the check does: no pass over every coup)."""
    empty = coups.clear()
    if coups.is_empty():
        return Sorted(coups, 0, empty, empty, 0, empty)
    on = list(COUP_KEY)
    keys = coups.select(*SHOE_KEY).unique() if keys is None else keys.select(*SHOE_KEY)
    on_live = keys.filter(pl.struct(*SHOE_KEY).is_in(
        pl.DataFrame(list(live), schema=dict.fromkeys(SHOE_KEY, pl.String), orient="row")
        .select(pl.struct(*SHOE_KEY)).to_series().implode())) if live else keys.clear()
    live_rows = coups.join(on_live, on=list(SHOE_KEY), how="semi") if on_live.height else empty
    if on_live.height:
        coups = coups.join(on_live, on=list(SHOE_KEY), how="anti")
        keys = keys.join(on_live, on=list(SHOE_KEY), how="anti")
    stored = store.read.stored_coups(keys)
    if replace and not stored.is_empty():
        wanted = set(keys.iter_rows())
        fixes = [e for e in store.journal.of_kinds(("coup_voided", "coup_amended"))
                 if (e.table_id, e.shoe_id) in wanted]
        stored = apply_corrections(stored, fixes, marked=True)
    else:
        stored = stored.with_columns(pl.lit(None, dtype=pl.String).alias(MARK))
    mine = earlier.join(keys, on=list(SHOE_KEY), how="semi").with_columns(
        pl.lit(None, dtype=pl.String).alias(MARK))
    current = pl.concat([stored.select(*COUP_KEY, *CONTENT, MARK).join(mine, on=on,
                                                                       how="anti"), mine])
    if current.is_empty():
        return Sorted(coups, 0, empty, empty, 0, live_rows)
    both = coups.join(current, on=on, how="inner", suffix="_stored")
    void = both.filter(pl.col(MARK).eq_missing("voided"))
    standing = both.filter(~pl.col(MARK).eq_missing("voided"))
    same = same_content()
    differing = coups.join(standing.filter(~same).select(*COUP_KEY), on=on, how="semi")
    return Sorted(coups.join(current.select(*COUP_KEY), on=on, how="anti"),
                  standing.filter(same).height, empty if replace else differing,
                  differing if replace else empty, void.height, live_rows)


def _amendments(coups: pl.DataFrame, reason: str, actor: str, run_id: str
                ) -> list[Preceding]:
    """A ``coup_amended`` event per coup whose stored content a re-import replaces: an
    administrative correction by the importer (no dealer's request), marked ``replace``."""
    return [("coup_amended", row["table_id"], row["shoe_id"],
             {"coup": row["coup"], "reason": reason, "approver": actor, "replace": True,
              "run": run_id, "new": {c: row[c] for c in CONTENT}})
            for row in coups.select(*COUP_KEY, *CONTENT).to_dicts()]


def _shoe_rows(known: pl.DataFrame, coups: pl.DataFrame, rules: RuleSet,
               totals: pl.DataFrame | None = None,
               this_run: pl.DataFrame | None = None) -> pl.DataFrame:
    """A ``shoes`` row for every imported shoe the store does not know yet (``known``: the
    stored shoes' keys).

    ``totals``: the shoes' totals if the caller has them for exactly these coups (the
    validation pass counts them, :attr:`Validated.shoes`); else they are grouped here.
    ``this_run``: the shoes (``SHOE_KEY``) earlier files of the run hold a row for."""
    if totals is None:
        totals = shoe_totals(coups)
    if this_run is not None and this_run.height:
        known = pl.concat([known, this_run.select(*SHOE_KEY)])
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


@dataclass
class _File:
    """One input file's share of the run, summed over its buckets (or its one pass)."""

    rows_read: int = 0
    accepted: int = 0
    already: int = 0
    replaced: int = 0
    kept_void: int = 0
    duplicates: int = 0
    flagged: int = 0
    conflicts: int = 0
    flags_by_rule: Counter[str] = field(default_factory=Counter)
    rejected: list[pl.DataFrame] = field(default_factory=list)
    flags: list[pl.DataFrame] = field(default_factory=list)
    kept: list[pl.DataFrame] | None = None  # the coups it gives, if later files need them


@dataclass
class _Run:
    """What an ingest run gathers before its one commit."""

    store: Store
    rules: RuleSet
    actor: str
    replace: bool
    run_id: str
    live: set[tuple[str, str]]
    earlier: pl.DataFrame  # COUP_KEY + CONTENT this run gives coups so far (earlier files)
    written: list[Written] = field(default_factory=list)
    amendments: list[Preceding] = field(default_factory=list)
    writing: list[Future[Written]] = field(default_factory=list)  # the last bucket's files
    bucket: bool = False  # whether those files are a bucket's (of a file read in chunks)
    staged: StagedRows | None = None  # the written files' shoe rows, staged for the commit

    def finish_writes(self) -> None:
        """Wait for the files in flight (they are written while the next bucket is checked,
        so both cores work) and add them to what the commit journals; their shoe rows go
        to the run's staging tables now, not all at once inside the commit."""
        writing, self.writing = self.writing, []
        if writing:
            done = [f.result() for f in writing]
            self.written += done if self.staged is None else \
                self.store.stage(self.staged, done)
            point("ingest:parts-written")
            if self.bucket:
                point("ingest:bucket-stored")

    def store_checked(self, path: Path, ids: tuple[str, ...], digest: str, parsed: Parsed,
                      out: _File) -> None:
        """Check parsed rows holding whole shoes, write their new coups and shoe rows as
        part files named after ``ids``, and add what was found to ``out``."""
        checked = check(parsed, self.rules.decks)
        store, earlier = self.store, self.earlier
        split = _sort(store, checked.coups, self.live, earlier, self.replace, checked.shoes)
        new = split.new
        if not new.is_empty():
            whole = new is checked.coups  # no coup set aside: the check's totals hold
            asked = checked.shoes if whole else new  # (the check's shoes: one row each)
            shoes = _shoe_rows(store.read.stored_shoe_keys(asked.select(*SHOE_KEY)), new,
                               self.rules,
                               checked.shoes if whole else None,
                               earlier.select(*SHOE_KEY).unique())
            meta = {"input_file": path.name, "input_sha256": digest, "ingest_run": self.run_id,
                    "rules": self.rules.name}
            parts = store.parts_by_day(new.with_columns(pl.lit(self.actor).alias("entered_by")),
                                       shoes, "import", (self.run_id, *ids), meta,
                                       checked.starts if whole else None)
            self.finish_writes()  # one bucket's files in flight at a time
            self.writing, self.bucket = store.start_parts(parts, "import", durable=False), \
                len(ids) > 1
        self.amendments += _amendments(split.amended, f"re-import of {path.name} with "
                                       f"--replace (run {self.run_id})", self.actor, self.run_id)
        kept = pl.concat([new, split.amended]).select(*COUP_KEY, *CONTENT)
        if out.kept is not None:
            out.kept.append(kept)
        out.rejected.append(pl.concat([checked.quarantine,
                                       _rejected_rows(path, split.conflicts, CONFLICT),
                                       _rejected_rows(path, split.on_live, LIVE_SHOE)]))
        row_flags = checked.flags
        if kept.height != checked.coups.height:  # only the flags of coups it keeps
            row_flags = row_flags.join(
                checked.coups.join(kept, on=list(COUP_KEY), how="anti").select(*COUP_KEY),
                on=list(COUP_KEY), how="anti", nulls_equal=False)
        out.flags.append(row_flags)
        out.rows_read += parsed.rows.height
        out.accepted += new.height
        out.already += split.already
        out.replaced += split.amended.height
        out.kept_void += split.kept_void
        out.duplicates += checked.duplicates
        out.flagged += checked.flags.select(*COUP_KEY).unique().height
        out.flags_by_rule.update(_counts(checked.flags, "rule"))
        out.conflicts += split.conflicts.height + split.on_live.height

    def remember(self, kept: list[pl.DataFrame]) -> None:
        """The coups a file gave, for the run's later files (their content wins)."""
        mine = pl.concat(kept)
        self.earlier = mine if self.earlier.is_empty() else pl.concat(  # (no join for one)
            [self.earlier.join(mine, on=list(COUP_KEY), how="anti"), mine])


def refuse_unreadable(paths: list[Path]) -> None:
    """Refuse the first path that is not a regular file (missing, a directory, a pipe):
    the command asks before it makes the store, so a mistyped name leaves nothing."""
    missing = [p for p in paths if not p.is_file()]
    if missing:
        what = ("is a directory; name the files in it" if missing[0].is_dir() else
                "is not a regular file (a pipe or a device); save it to a file first"
                if missing[0].exists() else "no such file")
        raise InputError(f"{missing[0]}: {what}")


def ingest(paths: list[Path], store: Store, options: ReadOptions, rules: RuleSet,
           progress: Callable[[Path], None] | None = None,
           actor: str = "cli", replace: bool = False) -> IngestResult:
    """Ingest files into the store; returns the report (also written as JSON).

    A file larger than :data:`roads.ingest.chunks.CHUNK_BYTES` is read in chunks and
    checked in buckets of whole shoes (:mod:`roads.ingest.chunks`), with the same outcome.
    ``replace``: import files again even if ingested, amending stored coups whose content
    differs (see the module doc)."""
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    refuse_unreadable(paths)
    files: list[dict[str, Any]] = []
    quarantine: list[pl.DataFrame] = []
    flags: list[pl.DataFrame] = []
    with store.bulk_lock(), store.staging() as staged, _nothing_left_on_failure(store):
        swept = _sweep(store)
        seen = ingested(store)
        this_run: set[str] = set()
        run = _Run(store, rules, actor, replace, run_id, store.read.journal_shoes(),
                   pl.DataFrame(schema={c: COUPS[c] for c in (*COUP_KEY, *CONTENT)}),
                   staged=staged)
        try:
            for number, path in enumerate(paths):
                fmt = options.format if options.format != "auto" else detect_format(path)
                if fmt == "csv":
                    check_header(path)
                spill = Spill(store.root, run_id, number, path) if chunked(path, fmt) else None
                with ThreadPoolExecutor(max_workers=1) as hasher:
                    if spill is not None:
                        parser, digest = spill_file(fmt, options, spill, hasher)
                        whole = None
                    else:
                        parsed, pending, parser = _parse(path, fmt, options, hasher)
                        whole = parsed
                        digest = pending.result()
                point("ingest:parsed")
                entry: dict[str, Any] = {"file": str(path), "sha256": digest}
                skip = ("listed twice in this run" if digest in this_run else
                        f"already ingested (run {seen[digest]}; --replace imports it again)"
                        if digest in seen and not replace else None)
                if skip is not None:
                    if spill is not None:
                        spill.remove()
                    files.append({**entry, "skipped": skip, "rows_read": 0, "accepted": 0,
                                  "quarantined": 0})
                    if progress:
                        progress(path)
                    continue
                columns = columns_of(path, fmt, options)
                out = _File(kept=[] if number < len(paths) - 1 else None)
                if whole is not None:
                    run.store_checked(path, (str(number),), digest, whole, out)
                    del whole, parsed
                else:
                    assert spill is not None
                    for bucket, rows in enumerate(spill):
                        run.store_checked(path, (str(number), f"b{bucket}"), digest, rows, out)
                    run.finish_writes()
                    spill.remove()
                if out.kept is not None:
                    run.remember(out.kept)
                rejected = pl.concat(out.rejected)
                if fmt == "csv":
                    rejected = _verbatim(path, rejected)
                quarantine.append(rejected)
                flags += out.flags
                files.append({
                    **entry, "format": fmt, "parser": parser, **columns.report(),
                    "rows_read": out.rows_read, "accepted": out.accepted,
                    "already_stored": out.already, "replaced": out.replaced,
                    **({"kept_void": out.kept_void, "replace": True} if replace else {}),
                    "duplicate_rows": out.duplicates,
                    "flagged": out.flagged,
                    "flags_by_rule": dict(out.flags_by_rule),
                    "quarantined": rejected.height,
                    "quarantined_by_reason": _counts(rejected, "reason"),
                    "conflicts": out.conflicts,
                })
                seen[digest] = run_id
                this_run.add(digest)
                if progress:
                    progress(path)
            run.finish_writes()
        finally:  # (an error mid-way: what was spilled goes; the parts, next run)
            for writing in run.writing:  # (no writer may outlive the bulk lock)
                writing.exception()
            remove_spill(store.root, run_id)
        attachments = _attachments(store, run_id, quarantine, flags)
        totals = {k: sum(int(f.get(k, 0)) for f in files)
                  for k in ("rows_read", "accepted", "replaced", "quarantined", "flagged")}
        report = {"run": run_id, "store": str(store.root), "rules": rules.name,
                  "replace": replace, "files": files, "totals": totals, "swept": swept}
        report_path = store.root / "ingest" / f"{run_id}.json"
        publish_text(report_path, json.dumps(report, indent=2, ensure_ascii=False))
        point("ingest:before-commit")
        store.commit("import_committed", run.written, {
            "run": run_id, "rules": rules.name, "totals": totals,
            "inputs": [{k: f[k] for k in ("file", "sha256", "skipped", "replace") if k in f}
                       for f in files],
            "attachments": {**attachments,
                            "report": {"path": f"ingest/{run_id}.json",
                                       "sha256": sha256(report_path)}}}, actor,
            before=run.amendments, staged=staged)
    return IngestResult(report, report_path)


def _verbatim(path: Path, rejected: pl.DataFrame) -> pl.DataFrame:
    """A CSV file's quarantined rows kept verbatim under their own column names; a ragged
    row keeps its line as the reader found it (no column names a field past the header's)."""
    named = pl.col("field").ne_missing(RAGGED_FIELD)
    rows = rejected.filter(named)["row"].drop_nulls()
    if not rows.len():
        return rejected
    verbatim = raw_rows(path, rows.to_list())
    return rejected.with_columns(pl.when(named).then(
        pl.col("row").replace_strict(verbatim, default=None, return_dtype=pl.String))
        .fill_null(pl.col("raw")).alias("raw"))


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
