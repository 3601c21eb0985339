"""``roads prepare``: compile every cached kernel once, before anyone waits for it.

Numba compiles a kernel the first time it is called with a given set of argument types, and
that can take half a minute for the ingest path. Instead of naming kernel modules (they move),
this runs the *public entry points* — the ``roads`` commands a user runs, on tiny inputs in a
temporary directory — so every kernel is compiled with the argument types real use gives it
and saved in :func:`roads.cache.cache_dir`. Run again, it loads them from the cache and
finishes in seconds; after a source change it compiles only what changed.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from roads.cache import cache_dir
from roads.errors import InputError

RULES = "standard-8"


class StepFailed(Exception):
    """An exercised command failed: the kernels after it were not prepared."""


@dataclass(frozen=True)
class StepReport:
    """What one step did: seconds, kernels compiled now, kernels loaded from the cache."""

    name: str
    seconds: float
    compiled: int
    loaded: int


def roads(*argv: str) -> str:
    """Run one ``roads`` command in this process; its output, or :class:`StepFailed`.

    Exit 1 ("ran, found a problem": a tiny store may be flagged) is accepted, exit 2 is not.
    """
    from roads.cli import main

    out = io.StringIO()
    code: int | str | None = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            main.main(args=list(argv), prog_name="roads", standalone_mode=False)
        except SystemExit as exc:
            code = exc.code
    if code not in (0, 1, None):
        raise StepFailed(f"`roads {' '.join(argv)}` exited {code}: {out.getvalue().strip()}")
    return out.getvalue()


def _stored_coups(sim: Path) -> pl.DataFrame:
    from roads.store import Store

    return Store.open(sim).read.coups()


def _odds(work: Path) -> None:
    roads("odds", "--json")
    roads("odds", "--effects", "--rules", "ez-8")
    roads("odds", "--decks", "1", "--seen", "As Kd 9c")


def _simulation(work: Path) -> None:
    roads("simulate", "--shoes", "8", "--tables", "2", "--seed", "1", "--quiet",
          "--out", str(work / "sim"))


def _board(work: Path) -> None:
    from roads.board import compiled_machine

    compiled_machine()  # short boards would run as plain Python: prepare the compiled ones
    roads("board", "BBPPPBPBBTPPBPBBBBBBBPT")
    roads("board", "TTBPTPBBTPB", "--leading-ties", "own-column", "--json")
    roads("board", "PBPBBPPPBT", "--svg", str(work / "board.svg"), "--theme", "colorblind")
    first = _stored_coups(work / "sim").row(0, named=True)
    roads("board", "--store", str(work / "sim"), "--table", first["table_id"],
          "--shoe", first["shoe_id"], "--json")


def _ingest(work: Path) -> None:
    from roads.store.digest import prepare_kernels

    prepare_kernels()  # (a small ingest digests without it; a large one would compile it)
    coups = _stored_coups(work / "sim")
    hands = coups.select(
        "table_id", "shoe_id", "coup", pl.col("outcome").cast(pl.String),
        pl.col("player_cards").cast(pl.List(pl.String)).list.join(" "),
        pl.col("banker_cards").cast(pl.List(pl.String)).list.join(" "),
        pl.col("dealt_at").dt.to_string("%Y-%m-%dT%H:%M:%SZ"))
    renamed = {"table_id": pl.lit("CSV-") + pl.col("table_id")}
    hands.with_columns(**renamed).write_csv(work / "plain.csv")  # the compiled CSV reader
    hands.with_columns(table_id=pl.lit("QUOTED-") + pl.col("table_id")).write_csv(
        work / "quoted.csv", quote_style="always")  # the general reader
    hands.with_columns(table_id=pl.lit("JSON-") + pl.col("table_id")).write_ndjson(
        work / "coups.jsonl")
    shoes = coups.group_by("shoe_id", maintain_order=True).agg(
        pl.col("outcome").cast(pl.String).str.join(""))
    (work / "shoes.txt").write_text("\n".join(shoes["outcome"]) + "\n", encoding="utf-8")
    store = str(work / "store")
    roads("ingest", str(work / "plain.csv"), "--store", store, "--rules", RULES)
    roads("ingest", str(work / "quoted.csv"), str(work / "coups.jsonl"), "--store", store)
    roads("ingest", str(work / "shoes.txt"), "--table", "LINES", "--store", store, "--json")
    parquet = sorted((work / "sim" / "coups").rglob("*.parquet"))[0]
    roads("ingest", str(parquet), "--store", str(work / "store-parquet"))


def _statistics(work: Path) -> None:
    store = str(work / "store")
    roads("stats", "--store", store)
    roads("check", "--store", store)
    first = _stored_coups(work / "sim").row(0, named=True)
    roads("stats", "--store", store, "--table", "CSV-" + first["table_id"],
          "--shoe", first["shoe_id"], "--json")
    roads("summary", "--store", str(work / "sim"))


def _batch(work: Path) -> None:
    sim = str(work / "sim")
    roads("batch", "roads", "--engine", "local", "--store", sim, "--out", str(work / "batch"))
    roads("batch", "stats", "--engine", "local", "--store", sim, "--out", str(work / "batch"))


def _live_tables(work: Path) -> None:
    """What the live server deals and shows: one shoe at a time (``roads serve --demo``)."""
    from roads.engine import deal_shoe
    from roads.rules import get_rules

    deal_shoe(get_rules(RULES), 7)


#: The entry points to exercise, in order (later steps read what earlier ones wrote).
STEPS: tuple[tuple[str, Callable[[Path], object]], ...] = (
    ("exact odds", _odds),
    ("simulation", _simulation),
    ("roads", _board),
    ("ingest", _ingest),
    ("statistics", _statistics),
    ("batch jobs", _batch),
    ("live tables", _live_tables),
)


def _kernel_counts() -> tuple[int, int]:
    """(compiled, loaded) over every kernel this process has called so far."""
    numba = sys.modules.get("numba")
    if numba is None:
        return 0, 0
    seen: set[int] = set()
    compiled = loaded = 0
    for name, module in list(sys.modules.items()):
        if name != "roads" and not name.startswith("roads."):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, numba.core.registry.CPUDispatcher) and id(value) not in seen:
                seen.add(id(value))
                compiled += sum(value.stats.cache_misses.values())
                loaded += sum(value.stats.cache_hits.values())
    return compiled, loaded


@contextlib.contextmanager
def _quiet_compiles() -> Iterator[None]:
    """The per-process "compiling kernels" notice is for commands; prepare reports itself."""
    from roads import kernel_cache

    kernel_cache.announce = False
    try:
        yield
    finally:
        kernel_cache.announce = True


def check_writable(directory: Path) -> None:
    """Refuse, naming the directory and the variable, a cache that cannot be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise InputError(f"cache directory {directory} is not writable ({exc.strerror}); "
                         "set ROADS_CACHE_DIR to a writable directory") from None


def prepare(progress: Callable[[StepReport], None] | None = None,
            steps: Sequence[tuple[str, Callable[[Path], object]]] = STEPS) -> list[StepReport]:
    """Run every step once; raise :class:`StepFailed` at the first that fails."""
    check_writable(cache_dir())
    reports = []
    with tempfile.TemporaryDirectory(prefix="roads-prepare-") as tmp, _quiet_compiles():
        for name, step in steps:
            before = _kernel_counts()
            start = time.perf_counter()
            try:
                step(Path(tmp))
            except StepFailed:
                raise
            except Exception as exc:
                raise StepFailed(f"{name}: {type(exc).__name__}: {exc}") from exc
            after = _kernel_counts()
            report = StepReport(name, time.perf_counter() - start,
                                after[0] - before[0], after[1] - before[1])
            reports.append(report)
            if progress is not None:
                progress(report)
    return reports
