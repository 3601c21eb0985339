"""The ``roads`` command: a thin shell that parses, calls the library and prints.

Exit codes: 0 success; 1 the work ran but found a problem; 2 bad input or usage (an unknown
rule set, a malformed card, an impossible composition) — always a one-line message, never a
traceback; 75 busy (a journal, store or accounts lock stayed taken past its wait: nothing was
done, try again); 141, without a message, when the reader of standard output went away.

Light commands (``odds``, ``rules``) import only what they need; nothing heavy is imported at
module level, so ``roads --help`` and ``roads odds`` never load numba, polars or pyarrow.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import json
import os
import random
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from roads import __version__
from roads.errors import InputError, JournalBusy, SigningRefused, UnsignedCommit
from roads.rules import PRESETS, RulesError, RuleSet, get_rules, ratio

F = TypeVar("F", bound=Callable[..., Any])
EXIT_INPUT = 2
#: A journal, store or accounts lock stayed taken past its wait: nothing was done, try again
#: later (sysexits' EX_TEMPFAIL, so a script can tell it from 1, "the work found a problem").
EXIT_BUSY = 75
DEFAULT_STORE = Path("data/store")


def _fail(message: str) -> None:
    """One line on stderr; control characters a file put in the message are escaped (a
    NUL or an escape sequence must not reach the terminal)."""
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)
    click.echo(f"roads: error: {shown}", err=True)
    sys.exit(EXIT_INPUT)


def input_errors(func: F) -> F:
    """Turn the library's input errors (and a signing key that is not the store's) into one
    line on stderr and exit code 2 (a journal, store or accounts lock that stayed taken: one
    line and :data:`EXIT_BUSY`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (InputError, SigningRefused) as exc:  # (a key not the store's: refused)
            _fail(str(exc))
        except UnsignedCommit as exc:  # stored, but not signed: done, with a problem
            click.echo(f"roads: error: {exc}", err=True)
            sys.exit(1)
        except JournalBusy as exc:  # not the input's fault, and not a finding: try again
            click.echo(f"roads: error: {exc}", err=True)
            sys.exit(EXIT_BUSY)
        except BrokenPipeError:
            raise  # the reader went away (``roads odds | head -1``): see run()
        except OSError as exc:
            _fail(f"{exc.filename or ''}: {exc.strerror or exc}")

    return wrapper  # type: ignore[return-value]


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def open_store(path: Path) -> Any:
    """The store at ``path`` for a command that only reads: exit 2 with ``no store at
    PATH`` when there is none, and nothing is created."""
    from roads.store import Store

    return Store.open(path)


def create_store(path: Path) -> Any:
    """The store at ``path`` for a command that writes (made when there is none)."""
    from roads.store import Store

    return Store.create(path)



@contextlib.contextmanager
def _made_for(path: Path) -> Iterator[Any]:
    """The store at ``path`` for an ingest; one this command made is removed again when the
    input is refused (a missing --map column, a repeated header: nothing was stored), so a
    mistyped store path or a bad file leaves no empty store behind."""
    made = not path.exists()
    store = create_store(path)
    try:
        yield store
    except InputError:
        if made:
            shutil.rmtree(path, ignore_errors=True)
        raise


class ClosedOutput(Exception):
    """Our standard output was closed by its reader; raised past click (which would exit 1)."""


class _Commands(click.Group):
    """The command group; a closed standard output anywhere inside ends as :class:`ClosedOutput`."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:  # while printing --help or --version
            raise ClosedOutput from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise ClosedOutput from None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Exit codes: 0 success, 1 the work found a problem, 2 bad input, 75 busy "
                    "(nothing was done: try again), 141 the output's reader went away.")
@click.version_option(__version__, prog_name="roads")
def main() -> None:
    """Baccarat Roads: shoe engine, exact odds, roads and statistics."""


@main.command("rules")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def rules_cmd(name: str | None, as_json: bool) -> None:
    """List the rule sets, or show one (NAME: a preset or a path to a .toml file)."""
    if name is not None:
        rules = get_rules(name)
        if as_json:
            _emit_json(rules.to_dict())
        else:
            _print_rules(rules)
        return
    if as_json:
        _emit_json([r.to_dict() for r in PRESETS.values()])
        return
    width = max(len(n) for n in PRESETS)
    for rules in PRESETS.values():
        click.echo(f"{rules.name:<{width}}  {rules.description}")


def _print_rules(rules: RuleSet) -> None:
    d = rules.to_dict()
    click.echo(f"{rules.name}: {rules.description}")
    click.echo(f"  decks            {rules.decks} ({rules.cards} cards)")
    commission = f" less {float(rules.banker_commission):.0%}" if rules.banker_commission else ""
    click.echo(f"  Banker pays      {ratio(rules.banker_payout)}{commission}"
               + ("; a three-card 7 pushes" if rules.ez_push else ""))
    click.echo(f"  Player pays      {ratio(rules.player_payout)}")
    click.echo(f"  Tie pays         {ratio(rules.tie_payout)}")
    for label, key in (("Pairs pay", "pair"), ("Dragon 7 pays", "dragon7"),
                       ("Panda 8 pays", "panda8")):
        if d["payouts"][key]:
            click.echo(f"  {label:<16} {d['payouts'][key]}")
    lo, hi = rules.cut_card_from_end
    cut = str(lo) if lo == hi else f"{lo}-{hi}"
    click.echo(f"  cut card         {cut} cards from the end, end rule {rules.end_rule}")
    click.echo(f"  burn             {rules.burn_rule}")
    table = {k: v for k, v in d["table"].items() if v not in (None, False)}
    if table:
        click.echo("  table            " + ", ".join(f"{k}={v}" for k, v in table.items()))
    click.echo(f"  from             {rules.source}")


@main.command("odds")
@click.option("--rules", "rules_name", default="standard-8", show_default=True,
              help="Rule set name or .toml path.")
@click.option("--decks", type=int, help="Override the rule set's number of decks.")
@click.option("--seen", default="", help='Cards already dealt, e.g. "As Kd 9c 10h".')
@click.option("--counts", default="",
              help='Explicit composition: a count for every rank, e.g. "A=32,2=32,3=32,4=32,'
                   '5=32,6=32,7=32,8=32,9=32,10=32,J=32,Q=32,K=32", or some ranks and *=N for '
                   'all the others ("A=0,*=32": eight decks without aces). A rank left out '
                   'without *= is refused. Overrides --seen and --decks.')
@click.option("--effects", is_flag=True,
              help="Also show the effect of removing one card of each value.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def odds_cmd(rules_name: str, decks: int | None, seen: str, counts: str, effects: bool,
             as_json: bool) -> None:
    """Exact next-coup odds and house edges for a shoe composition."""
    from roads.odds import (
        Composition,
        CompositionError,
        effects_of_removal,
        exact_odds,
        seen_from_text,
    )

    rules = get_rules(rules_name)
    label = rules.name
    if decks is not None:
        try:
            rules = replace(rules, decks=decks)
        except RulesError as exc:
            raise RulesError(f"--decks {decks}: {exc}") from None
        label = f"{rules.name} with {decks} deck{'s' if decks != 1 else ''}"
    if counts:
        try:
            composition = Composition.from_counts(_rank_counts(counts), require_all=True)
        except CompositionError as exc:
            raise CompositionError(f"--counts: {exc}") from None
        label = f"{rules.name} payouts, explicit composition"
    else:
        composition = Composition.after_seen(rules.decks, seen_from_text(seen))
    odds = exact_odds(composition, detail=True)
    result = odds.to_dict(rules)
    if effects:
        result["effects_of_removal"] = effects_of_removal(composition, rules)
    if as_json:
        _emit_json(result | {"decks": None if counts else rules.decks})
        return
    click.echo(f"{label}: {composition.cards} cards in the shoe")
    total = result["ways"]["total"]
    click.echo(f"  ordered 6-card ways  {total:,}")
    for key in ("banker", "player", "tie"):
        ways = result["ways"][key]
        click.echo(f"  {key.capitalize():<7} {ways:>26,}  p = {ways / total:.8f}")
    click.echo(f"  pair probability     {result['pair_probability']} "
               f"= {result['probability']['pair']:.8f}")
    click.echo("  house edge:")
    for key, edge in result["house_edge"].items():
        click.echo(f"    {key:<12} {edge * 100:9.6f}%")
    if effects:
        click.echo("  effect of removing one card (change in P(Player), Banker edge):")
        for value, eff in result["effects_of_removal"].items():
            click.echo(f"    {value:>2}  {eff['delta_p_player']:+.4e}  "
                       f"{eff['delta_edge_banker'] * 100:+.6f}%")
    click.echo("Information only: no betting system changes the house edge.")


def _rank_counts(text: str) -> dict[str, int]:
    """``--counts`` as written: ``RANK=COUNT`` items, ``*`` standing for every rank not given."""
    from roads.odds import CompositionError

    parsed: dict[str, int] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise CompositionError(f"cannot read {item.strip()!r} (use RANK=COUNT)")
        if key.strip().upper() in parsed:
            raise CompositionError(f"rank {key.strip()} given twice")
        parsed[key.strip().upper()] = int(value)
    return parsed


@main.command("simulate")
@click.option("--shoes", type=click.IntRange(min=1), required=True, help="Shoes to deal.")
@click.option("--tables", type=click.IntRange(min=1, max=999), default=1, show_default=True,
              help="Spread the shoes round-robin over this many tables.")
@click.option("--rules", "rules_name", default="standard-8", show_default=True,
              help="Rule set name or .toml path.")
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1),
              help="Run seed (default: random, printed).")
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store to deal into (made if there is none).")
@click.option("--start", type=click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
              help="Simulated clock start, UTC (default 2026-01-01).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary of the run.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@input_errors
def simulate_cmd(shoes: int, tables: int, rules_name: str, seed: int | None, out: Path,
                 start: datetime | None, as_json: bool, quiet: bool) -> None:
    """Deal complete shoes with the engine and write them as canonical Parquet."""
    from datetime import UTC

    from tqdm import tqdm

    from roads.simulate import DEFAULT_START, Simulation, write_simulation

    rules = get_rules(rules_name)
    if seed is None:
        seed = random.SystemRandom().randrange(2**63)
    begin = start.replace(tzinfo=UTC) if start else DEFAULT_START
    sim = Simulation(rules=rules, shoes=shoes, seed=seed, tables=tables, start=begin)
    with tqdm(total=shoes, unit="shoe", disable=quiet or as_json, file=sys.stderr,
              desc="dealing") as bar:
        files, coups = write_simulation(sim, create_store(out), lambda n, _c: bar.update(n))
    summary = {"rules": rules.name, "seed": seed, "shoes": shoes, "tables": tables,
               "coups": coups, "out": str(out), "files": [str(f) for f in files]}
    if as_json:
        _emit_json(summary)
    else:
        click.echo(f"dealt {shoes:,} shoes ({coups:,} coups) under {rules.name}, seed {seed}, "
                   f"into {out}")


@main.command("summary")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Dataset directory.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True,
              help="Show at most this many shoes (the most recent).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def summary_cmd(store: Path, limit: int, as_json: bool) -> None:
    """Per-shoe summary of a store: coups, Banker/Player/Tie, pairs, naturals (corrections
    applied, open shoes marked)."""
    from roads.analysis import summary

    table, total = summary(open_store(store), limit)
    if as_json:
        _emit_json(table.to_dicts())
        return
    if table.is_empty():
        click.echo(f"no shoes in {store}")
        return
    click.echo(f"the last {table.height:,} of {total:,} shoe(s), oldest first"
               + (" (--limit to see more)" if table.height < total else ""))
    click.echo(f"{'table':<8} {'shoe':<18} {'rules':<11} {'coups':>5} {'B':>4} {'P':>4} "
               f"{'T':>4} {'BP':>3} {'PP':>3} {'nat':>4}  outcomes")
    for row in table.iter_rows(named=True):
        shoe = row["shoe_id"] + (" (open)" if row["open"] else "")
        click.echo(
            f"{row['table_id']:<8} {shoe:<18} {row['rules'] or '':<11} "
            f"{row['coups']:>5} {row['banker']:>4} {row['player']:>4} {row['tie']:>4} "
            f"{row['banker_pairs']:>3} {row['player_pairs']:>3} {row['naturals']:>4}  "
            f"{row['outcomes'][:40]}{'…' if len(row['outcomes']) > 40 else ''}"
        )


@main.command("board")
@click.argument("outcomes", required=False)
@click.option("--leading-ties", type=click.Choice(["first-cell", "own-column"]),
              default="first-cell", show_default=True,
              help="Ties before the first Banker/Player: on the first cell, or a column of "
                   "their own.")
@click.option("--store", type=click.Path(path_type=Path), help="Read a stored shoe instead.")
@click.option("--table", "table_id", help="Table of the stored shoe (with --store).")
@click.option("--shoe", "shoe_id", help="Shoe id of the stored shoe (with --store).")
@click.option("--json", "as_json", is_flag=True, help="Print the roads JSON contract.")
@click.option("--svg", "svg_path", type=click.Path(path_type=Path),
              help="Also draw the full scoreboard to this SVG file.")
@click.option("--theme", default="classic", show_default=True,
              help="SVG colour theme: classic, dark, colorblind.")
@click.option("--window", type=click.IntRange(min=6), help="Show only the last N columns.")
@input_errors
def board_cmd(outcomes: str | None, leading_ties: str, store: Path | None,
              table_id: str | None, shoe_id: str | None, as_json: bool, svg_path: Path | None,
              theme: str, window: int | None) -> None:
    """The roads of one shoe: OUTCOMES as a B/P/T string ('-' reads standard input), or a
    stored shoe with --store/--table/--shoe."""
    from roads.board import Board
    from roads.render import scoreboard_svg
    from roads.render.text import board_text

    if store is not None:
        if outcomes is not None or not table_id or not shoe_id:
            raise InputError("with --store give --table and --shoe, and no OUTCOMES")
        board = _stored_board(store, table_id, shoe_id, leading_ties)
        title = f"{table_id} · {shoe_id}"
    elif outcomes is None:
        raise InputError("give OUTCOMES (a B/P/T string, or - for standard input) or --store")
    else:
        text = sys.stdin.read() if outcomes == "-" else outcomes
        board = Board.from_outcomes(text, leading_ties)  # type: ignore[arg-type]
        title = None
    if svg_path is not None:
        svg = scoreboard_svg(board, theme=theme, window=window, title=title)
        svg_path.write_text(svg, encoding="utf-8")
    if as_json:
        _emit_json(board.to_dict())
    elif svg_path is None:
        click.echo(board_text(board, window))


def _stored_board(store: Path, table_id: str, shoe_id: str, leading_ties: str) -> Any:
    from roads.board import Board
    from roads.store import Selection

    rows = open_store(store).read.coups(Selection(table_id, shoe_id))
    if rows.is_empty():
        raise InputError(f"no coups of table {table_id!r} shoe {shoe_id!r} in {store}")
    return Board.from_coups(rows.iter_rows(named=True), leading_ties)  # type: ignore[arg-type]


@main.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "shoe-lines", "jsonl",
                                                    "parquet"]),
              default="auto", show_default=True, help="Input format (auto: detect).")
@click.option("--table", "table_id", help="Table for rows that do not name one.")
@click.option("--shoe", "shoe_id", help="Shoe for rows that do not name one.")
@click.option("--rules", "rules_name", default="standard-8", show_default=True,
              help="Rule set of the imported shoes (decks for the inventory check).")
@click.option("--map", "mappings", multiple=True, metavar="FIELD=COLUMN",
              help="Map a canonical field to an input column, e.g. player_cards=PHand.")
@click.option("--replace", is_flag=True,
              help="Import files again even if ingested: stored coups whose content differs "
                   "are amended (journaled, the old rows kept as originals).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@input_errors
def ingest_cmd(files: tuple[Path, ...], store: Path, fmt: str, table_id: str | None,
               shoe_id: str | None, rules_name: str, mappings: tuple[str, ...], replace: bool,
               as_json: bool) -> None:
    """Read coup histories, validate every row, store what is sound.

    Rejected rows go to STORE/quarantine/RUN.jsonl with file, row and reason; rows that
    break a rule are stored and listed in STORE/flags/RUN.parquet; the report is printed and
    written to STORE/ingest/RUN.json, naming the columns nothing was read from. Exit 1 when
    anything was quarantined or conflicted.
    """
    from tqdm import tqdm

    from roads.ingest.header import parse_map
    from roads.ingest.readers import FIELDS, ReadOptions
    from roads.ingest.run import ingest, refuse_unreadable

    refuse_unreadable(list(files))  # before the store is made: a refused name leaves none
    mapping = parse_map(mappings, FIELDS)
    options = ReadOptions(format=fmt, table_id=table_id, shoe_id=shoe_id, mapping=mapping)
    rules = get_rules(rules_name)
    with tqdm(total=len(files), unit="file", disable=as_json or len(files) < 2,
              file=sys.stderr, desc="ingesting") as bar, _made_for(store) as target:
        result = ingest(list(files), target, options, rules, lambda _p: bar.update(1),
                        actor=os.environ.get("USER", "cli"), replace=replace)
    for f in result.report["files"]:  # on stderr, so a redirected report still shows them
        for warning in f.get("warnings", ()):
            click.echo(f"roads: warning: {f['file']}: {warning}", err=True)
    if as_json:
        _emit_json(result.report)
    else:
        for f in result.report["files"]:
            _print_ingested(f)
        click.echo(f"report: {result.report_path}")
    if result.quarantined:
        sys.exit(1)


def _print_ingested(f: dict[str, Any]) -> None:
    """One file of an ingest report: counts, then what was flagged, set aside or not read."""
    if "skipped" in f:
        click.echo(f"{f['file']}: {f['skipped']}")
        return
    replaced = f", {f['replaced']:,} replaced" if f.get("replace") else ""
    click.echo(f"{f['file']} ({f['format']}; reader: {f['parser']}): "
               f"{f['rows_read']:,} rows read, {f['accepted']:,} stored{replaced}, "
               f"{f['already_stored']:,} already stored, {f['flagged']:,} flagged, "
               f"{f['quarantined']:,} quarantined")
    if f.get("kept_void"):
        click.echo(f"    left void (a correction voided them): {f['kept_void']:,}")
    for rule, n in sorted(f["flags_by_rule"].items()):
        click.echo(f"    flagged {rule}: {n:,}")
    for reason, n in sorted(f["quarantined_by_reason"].items()):
        click.echo(f"    quarantined: {reason}: {n:,}")
    if f.get("ignored_columns"):
        click.echo(f"    columns not read: {', '.join(f['ignored_columns'])}")
    for hint in f.get("suggestions", ()):
        click.echo(f"    {hint}")


def _slice_options(func: F) -> F:
    options = [
        click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
                     show_default=True, help="Store directory."),
        click.option("--table", "table_id", help="Only this table."),
        click.option("--shoe", "shoe_id", help="Only this shoe."),
        click.option("--from", "start", type=click.DateTime(formats=["%Y-%m-%d"]),
                     help="First day (UTC)."),
        click.option("--to", "end", type=click.DateTime(formats=["%Y-%m-%d"]),
                     help="Last day (UTC)."),
        click.option("--level", type=click.FloatRange(0.5, 0.9999), default=0.99,
                     show_default=True, help="Confidence level for flags."),
        click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _slice_report(store: Path, table_id: str | None, shoe_id: str | None,
                  start: datetime | None, end: datetime | None,
                  level: float) -> dict[str, Any]:
    # A command that reads every file once and exits: Arrow's allocator (mimalloc) keeps
    # the pages of freed buffers for the next row group instead of returning them to the
    # system and faulting them in again (a third of the page faults of `roads stats` over
    # a store, ~0.5 s of system time at 10 M coups). Read when pyarrow loads, below; a
    # server keeps the default.
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")
    from roads.analysis import statistics
    from roads.store import Selection

    if start and end and start > end:
        raise InputError(f"--from {start:%Y-%m-%d} is after --to {end:%Y-%m-%d}: the range "
                         "holds no day")
    opened = open_store(store)
    if table_id is not None:  # (a mistyped table read as "0 coups checked: nothing flagged")
        tables = opened.read.tables()
        if table_id not in tables:
            shown = ", ".join(tables[:12]) + (", ..." if len(tables) > 12 else "")
            raise InputError(f"--table {table_id}: the store holds no such table"
                             + (f" (its tables: {shown})" if tables else " (it holds none)"))
    sel = Selection(table_id, shoe_id, start.date() if start else None,
                    end.date() if end else None)
    return statistics(opened, sel, level)


@main.command("stats")
@_slice_options
@input_errors
def stats_cmd(store: Path, table_id: str | None, shoe_id: str | None, start: datetime | None,
              end: datetime | None, level: float, as_json: bool) -> None:
    """Outcome statistics against their exact expectations, randomness tests and integrity
    findings for a shoe, a table, a date range or everything (docs/stats.md)."""
    result = _slice_report(store, table_id, shoe_id, start, end, level)
    if as_json:
        _emit_json(result)
        return
    stats = result["statistics"]
    if not stats["coups"]:
        click.echo("no coups in this slice")
        return
    click.echo(f"{stats['coups']:,} coups in {stats['shoes']:,} shoe(s); rules "
               f"{', '.join(stats['rules'])}")
    click.echo(f"{'':<14}{'count':>11} {'share':>9} {'expected':>9}  99% interval")
    rows = [(n.capitalize(), m) for n, m in stats["outcomes"].items()]
    rows += [("Player pair", stats["pairs"]["player"]), ("Banker pair", stats["pairs"]["banker"]),
             ("Natural", stats["naturals"])]
    for label, m in rows:
        if m["n"]:
            mark = "  <- outside" if m["outside_ci99"] else ""
            click.echo(f"{label:<14}{m['count']:>11,} {m['share']:>9.4%} "
                       f"{m['expected_share']:>9.4%}  [{m['ci99'][0]:.4%}, "
                       f"{m['ci99'][1]:.4%}]{mark}")
    streak = stats["streaks"]
    click.echo(f"longest runs: Banker {streak['longest_banker_run']}, Player "
               f"{streak['longest_player_run']}; coups per shoe "
               f"{stats['pace']['coups_per_shoe']['mean']:.1f}")
    _print_checks(result)


def _print_checks(result: dict[str, Any]) -> None:
    randomness = result["randomness"]
    if randomness:
        click.echo(f"randomness tests ({randomness['correction']}-adjusted, level "
                   f"{randomness['level']:.0%}):")
        for t in randomness["tests"]:
            flag = "  FLAGGED" if t["flagged"] else ""
            click.echo(f"  {t['test']:<30} p = {t['p_value']:.4g}  adjusted {t['p_adjusted']:.4g}"
                       f"{flag}")
    for f in result["integrity"]:
        where = f"{f['table_id']}/{f['shoe_id']}"
        coups = f" coups {', '.join(map(str, f['coups'][:10]))}" if f["coups"] else ""
        click.echo(f"  [{f['severity']}] {f['check']} at {where}{coups}: {f['explanation']}")


@main.command("check")
@_slice_options
@input_errors
def check_cmd(store: Path, table_id: str | None, shoe_id: str | None, start: datetime | None,
              end: datetime | None, level: float, as_json: bool) -> None:
    """Integrity and randomness checks; exit 1 when anything is flagged."""
    result = _slice_report(store, table_id, shoe_id, start, end, level)
    flagged = bool(result["integrity"]) or bool(
        result["randomness"] and result["randomness"]["flagged"])
    coups = int(result["statistics"]["coups"])
    if as_json:
        _emit_json({"flagged": flagged, "coups": coups,
                    "randomness": result["randomness"], "integrity": result["integrity"]})
    else:
        click.echo(f"{coups:,} coups checked: "
                   + ("FLAGGED" if flagged else "nothing flagged"))
        _print_checks(result)
    if flagged:
        sys.exit(1)


@main.command("export")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--table", "table_id", help="A table: all of it, or with --date / --from --to.")
@click.option("--shoe", "shoe_id", help="One shoe (with --table when ids repeat).")
@click.option("--date", "day", type=click.DateTime(formats=["%Y-%m-%d"]),
              help="One table-day (UTC): the shoes that began that day.")
@click.option("--from", "start", type=click.DateTime(formats=["%Y-%m-%d"]),
              help="First day (the shoes that began from then on).")
@click.option("--to", "end", type=click.DateTime(formats=["%Y-%m-%d"]), help="Last day.")
@click.option("--all", "everything", is_flag=True,
              help="The whole store (shoes with no recorded time included).")
@click.option("--logins", is_flag=True,
              help="Also the logins and account changes of the journal range (an audit "
                   "export; otherwise they are redacted).")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="New directory for the bundle.")
@click.option("--sign", "key_file", type=click.Path(path_type=Path),
              help="Ed25519 private key (PEM) to sign the manifest with.")
@click.option("--by", "exported_by", default=lambda: os.environ.get("USER", "unknown"),
              help="Who exports (recorded in the manifest).")
@click.option("--format", "formats", default="pdf,csv,parquet", show_default=True,
              help="Comma-separated: pdf, csv, parquet, xlsx (CSV and Parquet are always "
                   "written).")
@click.option("--page", "page_format", type=click.Choice(["A4", "Letter"]), default="A4",
              show_default=True, help="PDF page size.")
@click.option("--casino", help="Casino name on the PDF's cover.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@input_errors
def export_cmd(store: Path, table_id: str | None, shoe_id: str | None, day: datetime | None,
               start: datetime | None, end: datetime | None, everything: bool, logins: bool,
               out: Path, key_file: Path | None, exported_by: str, formats: str,
               page_format: str, casino: str | None, quiet: bool) -> None:
    """Write a verifiable bundle of whole shoes: a PDF report, and coups, shoes, corrections
    and journal events as CSV and Parquet (and XLSX), with manifest.json (SHA-256 of every
    file), the store's signed checkpoints and an optional signature."""
    from roads.audit.bundle import Slice, export_bundle

    chosen_slice = (table_id, shoe_id, day, start, end)
    if everything == any(v is not None for v in chosen_slice):
        raise InputError("choose --shoe S, --table T (with --date D or --from/--to), "
                         "--from D --to D, or --all")
    if day is not None and table_id is None:
        raise InputError("--date needs --table (a table-day)")
    what = Slice(table_id, shoe_id, day.date() if day else None,
                 start.date() if start else None, end.date() if end else None)
    chosen = tuple(f.strip().lower() for f in formats.split(",") if f.strip())
    manifest = export_bundle(open_store(store), what, out, exported_by, key_file,
                             tuple(f for f in chosen if f in ("pdf", "xlsx")) +
                             tuple(f for f in chosen if f not in ("pdf", "xlsx", "csv",
                                                                  "parquet")),
                             page_format, casino, progress=not quiet, logins=logins)
    rows = manifest["files"]["coups.parquet"]["rows"]
    click.echo(f"exported {rows:,} coups, {manifest['journal']['events']:,} journal events "
               f"into {out}" + (" (signed)" if key_file else ""))


@main.command("verify")
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--pubkey", type=click.Path(path_type=Path),
              help="Ed25519 public key (PEM) the manifest must be signed with.")
def verify_cmd(bundle: Path, pubkey: Path | None) -> None:
    """Check every digest, row count, CSV against Parquet, the journal chain and the
    signature. Exit 0 when all holds, 1 with the first discrepancy otherwise."""
    from roads.audit.bundle import BundleError, verify

    try:
        manifest = verify(bundle, pubkey)
    except BundleError as exc:
        click.echo(f"FAILED: {exc}", err=True)
        sys.exit(1)
    click.echo(f"OK: {len(manifest['files'])} files, "
               f"{manifest['files']['coups.parquet']['rows']:,} coups, "
               f"{manifest['journal']['events']:,} journal events"
               + (", signature valid" if pubkey else
                  "; unsigned: consistent, but who made it is not checked"))


@main.command("audit")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--table", "table_id", help="Only this table.")
@click.option("--from", "start", type=click.DateTime(formats=["%Y-%m-%d"]), help="First day.")
@click.option("--to", "end", type=click.DateTime(formats=["%Y-%m-%d"]), help="Last day.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def audit_cmd(store: Path, table_id: str | None, start: datetime | None, end: datetime | None,
              as_json: bool) -> None:
    """Every journaled action (entries, corrections, approvals, seals, purges) with who
    and when."""
    from roads.audit.trail import audit_trail

    rows = audit_trail(open_store(store), table_id, start.date() if start else None,
                       end.date() if end else None)
    if as_json:
        _emit_json(rows)
        return
    for r in rows:
        where = f"{r['table_id']}/{r['shoe_id']}" if r["shoe_id"] else r["table_id"]
        details = ", ".join(f"{k}={v}" for k, v in r["details"].items())
        click.echo(f"{r['seq']:>7} {r['at'][:19]} {r['kind']:<13} {where:<24} "
                   f"{r['actor'] or '-':<12} {details}")


@main.command("purge")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--before", type=click.DateTime(formats=["%Y-%m-%d"]), required=True,
              help="Delete day partitions older than this day.")
@click.option("--profile", default="default", show_default=True,
              help="Retention profile (nevada, new-jersey, maryland, nebraska, macau, default).")
@click.option("--by", "actor", default=lambda: os.environ.get("USER", "unknown"),
              help="Who purges (journaled).")
@input_errors
def purge_cmd(store: Path, before: datetime, profile: str, actor: str) -> None:
    """Delete stored days older than --before; refused inside the retention period."""
    from roads.audit.trail import purge

    removed = purge(open_store(store), before.date(), actor, profile)
    click.echo(f"purged {len(removed)} partition(s) before {before.date().isoformat()}")


@main.command("keys")
@click.argument("private", type=click.Path(path_type=Path))
@click.argument("public", type=click.Path(path_type=Path))
def keys_cmd(private: Path, public: Path) -> None:
    """Create an Ed25519 key pair for signing export bundles (PEM files)."""
    from roads.audit.bundle import generate_keys

    generate_keys(private, public)
    click.echo(f"private key {private} (keep it secret), public key {public}")


@main.group("batch")
def batch_group() -> None:
    """Roads, statistics or simulation over a whole dataset, locally or on Spark."""


def _engine_options(func: F) -> F:
    options = [
        click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
                     show_default=True, help="Where to run."),
        click.option("--master", default="local[2]", show_default=True,
                     help="Spark master URL (with --engine spark)."),
        click.option("--partitions", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Spark partitions."),
        click.option("--out", type=click.Path(path_type=Path), required=True,
                     help="Output directory."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@batch_group.command("roads")
@_engine_options
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Dataset to read.")
@click.option("--leading-ties", type=click.Choice(["first-cell", "own-column"]),
              default="first-cell", show_default=True)
@input_errors
def batch_roads_cmd(engine: str, master: str, partitions: int, out: Path, store: Path,
                    leading_ties: str) -> None:
    """Per-shoe roads (columns, ties, marks, asks, streaks) into OUT/roads/ as Parquet."""
    from roads.scale import engines as e

    source = open_store(store)
    if engine == "spark":
        result = e.roads_spark(source, out, leading_ties,  # type: ignore[arg-type]
                               e.SparkOptions(master, partitions))
    else:
        result = e.roads_local(source, out, leading_ties)  # type: ignore[arg-type]
    click.echo(f"roads of {result.height:,} shoes ({int(result['coups'].sum()):,} coups) "
               f"-> {out / 'roads'}")


@batch_group.command("stats")
@_engine_options
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Dataset to read.")
@click.option("--level", type=click.FloatRange(0.5, 0.9999), default=0.99, show_default=True)
@input_errors
def batch_stats_cmd(engine: str, master: str, partitions: int, out: Path, store: Path,
                    level: float) -> None:
    """Statistics and randomness tests, combined exactly across partitions, into
    OUT/stats.json. Exit 1 when a test is flagged."""
    from roads.scale import engines as e

    source = open_store(store)
    if engine == "spark":
        result = e.stats_spark(source, out, level, e.SparkOptions(master, partitions))
    else:
        result = e.stats_local(source, out, level)
    stats = result["statistics"]
    click.echo(f"{stats['coups']:,} coups in {stats['shoes']:,} shoes -> {out / 'stats.json'}; "
               f"randomness flagged: {result['randomness']['flagged']}")
    if result["randomness"]["flagged"]:
        sys.exit(1)


@batch_group.command("simulate")
@_engine_options
@click.option("--shoes", type=click.IntRange(min=1), required=True)
@click.option("--tables", type=click.IntRange(min=1, max=999), default=1, show_default=True)
@click.option("--rules", "rules_name", default="standard-8", show_default=True)
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), required=True)
@input_errors
def batch_simulate_cmd(engine: str, master: str, partitions: int, out: Path, shoes: int,
                       tables: int, rules_name: str, seed: int) -> None:
    """Deal N shoes; the same seed gives the same shoes on either engine."""
    from roads.scale import engines as e
    from roads.simulate import Simulation

    sim = Simulation(get_rules(rules_name), shoes=shoes, seed=seed, tables=tables)
    target = create_store(out)
    if engine == "spark":
        coups = e.simulate_spark(sim, target, e.SparkOptions(master, partitions))
    else:
        coups = e.simulate_local(sim, target)
    click.echo(f"dealt {shoes:,} shoes ({coups:,} coups) on {engine} into {out}")


@main.group("store")
def store_group() -> None:
    """Inspect and maintain a store (Parquet dataset + live journal)."""


@store_group.command("info")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def store_info_cmd(store: Path, as_json: bool) -> None:
    """Files, rows and bytes; the journal's head and chain check; the cheap checks (every
    journaled file present at its size, nothing unaccounted for, the checkpoints hold).

    Exits 1 when any of them fails (`roads store verify` re-reads every byte)."""
    info = open_store(store).info()
    broken = not info["journal"]["chain_ok"] or info["problems"]
    if as_json:
        _emit_json(info)
    else:
        for table in ("coups", "shoes"):
            t = info[table]
            click.echo(f"{table:<6} {t['rows']:>12,} rows  {t['files']:>6,} files  "
                       f"{t['partitions']:>5,} partitions  {t['bytes'] / 1e6:10.1f} MB")
        j = info["journal"]
        state = "chain intact" if j["chain_ok"] else f"CHAIN BROKEN: {j['problem']}"
        click.echo(f"journal {j['events']:,} events, head {j['head'][:16]}…, {state}")
        for problem in info["problems"]:
            click.echo(f"PROBLEM {problem['kind']}: {problem['where']}: {problem['detail']}")
    if broken:
        sys.exit(1)


@store_group.command("verify")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--deep", is_flag=True, help="Also decode every row and recompute each file's "
                                           "content digest.")
@click.option("--anchor", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A copy of checkpoints kept off this machine (a bundle's "
                   "checkpoints.jsonl, a WORM copy): the journal must still hold each.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@input_errors
def store_verify_cmd(store: Path, deep: bool, anchor: Path | None, as_json: bool,
                     quiet: bool) -> None:
    """Re-read every stored file and the journal: files missing, altered or not accounted
    for, shoes held twice, sealed shoes that differ from their journal events, chain breaks
    and checkpoints that no longer hold. Exit 0 when all holds, 1 naming the first problem
    of each kind."""
    from roads.store import EarlyReads

    collecting = gc.isenabled()
    gc.disable()  # (the imports below ran ~100 collections, one full, that found next to nothing)
    try:
        early = EarlyReads(store)  # hashing and SQLite (no GIL) beside the imports below
        early.read_keys()  # (pyarrow imports here; the files' keys are read beside polars')
        from roads.store.verify import verify
    finally:
        gc.freeze()  # (what they made stays: the checks' collections need not look at it)
        if collecting:
            gc.enable()

    try:
        s = open_store(store)
        if quiet or as_json:  # no bar: tqdm's import alone is a tenth of a second
            report = verify(s, deep=deep, anchor=anchor, early=early)
        else:
            from tqdm import tqdm

            with tqdm(unit="coup", unit_scale=True, file=sys.stderr, desc="verifying") as bar:
                report = verify(s, deep=deep, progress=bar.update, anchor=anchor,
                                early=early)
    finally:
        early.close()  # (an error must not leave the exit waiting on the read-ahead)
    if as_json:
        _emit_json(report.to_json())
    elif report.ok:
        click.echo(f"OK: {report.files:,} files ({report.bytes / 1e6:,.1f} MB, "
                   f"{report.coups:,} coups), {report.events:,} journal events, "
                   f"{report.sealed_shoes:,} sealed shoes checked against the journal")
    else:
        for problem in report.first_of_each_kind():
            more = sum(p["kind"] == problem["kind"] for p in report.problems) - 1
            click.echo(f"FAILED {problem['kind']}: {problem['where']}: {problem['detail']}"
                       + (f" (and {more} more)" if more else ""))
    if not report.ok:
        sys.exit(1)


@store_group.command("compact")
@click.option("--store", type=click.Path(path_type=Path), default=DEFAULT_STORE,
              show_default=True, help="Store directory.")
@click.option("--before", type=click.DateTime(formats=["%Y-%m-%d"]),
              help="Compact days before this date (default: today, UTC).")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@input_errors
def store_compact_cmd(store: Path, before: datetime | None, as_json: bool) -> None:
    """Merge the part files of every closed day into one file per day (crash-safe)."""
    s = open_store(store)
    sealed = s.seal_pending()
    report = s.compact(before.date() if before else None,
                       os.environ.get("USER", "cli"))
    report["shoes_sealed"] = len(sealed)
    if as_json:
        _emit_json(report)
    else:
        click.echo(f"compacted {report['partitions_compacted']} day(s), replacing "
                   f"{report['files_replaced']} file(s); sealed {len(sealed)} pending shoe(s)")


@main.command("prepare")
@click.option("--quiet", is_flag=True, help="No progress lines on stderr.")
@input_errors
def prepare_cmd(quiet: bool) -> None:
    """Compile every kernel once, so that no later command pauses to compile.

    Runs each kind of command (odds, simulation, roads, ingest, statistics, batch jobs, live
    tables) on tiny inputs in a temporary directory; the compiled kernels go to the cache
    directory ($ROADS_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache, under
    baccarat-roads/VERSION-pyX.Y). Run it once after installing; a second run loads
    everything from the cache in seconds. Exit 1 when a step fails (the message says which),
    2 when the cache directory is not writable.
    """
    import time

    from roads.cache import cache_dir
    from roads.prepare import StepFailed, StepReport, check_writable, prepare

    def show(step: StepReport) -> None:
        if not quiet:
            click.echo(f"  {step.name:<12} {step.seconds:6.1f} s   compiled {step.compiled:>3}, "
                       f"from the cache {step.loaded:>3}", err=True)

    check_writable(cache_dir())
    if not quiet:
        click.echo(f"preparing kernels in {cache_dir()}", err=True)
    start = time.perf_counter()
    try:
        steps = prepare(show)
    except StepFailed as exc:
        click.echo(f"roads: prepare failed: {exc}", err=True)
        sys.exit(1)
    compiled = sum(s.compiled for s in steps)
    loaded = sum(s.loaded for s in steps)
    click.echo(f"kernels ready in {cache_dir()}: {compiled} compiled, {loaded} from the cache "
               f"({time.perf_counter() - start:.1f} s)")


from roads import cli_live  # noqa: E402,F401  (registers serve and users)

#: Exit status when the reader of our output went away (``roads odds | head -1``): what a
#: process killed by SIGPIPE reports, as ``cat``, ``seq`` and the other coreutils do.
EXIT_CLOSED_OUTPUT = 128 + 13


def _invoke(argv: list[str] | None = None) -> int:
    """Run :func:`main` as click's standalone mode would, except for a closed output, which
    ends quietly with :data:`EXIT_CLOSED_OUTPUT` (click would exit 1, "found a problem")."""
    try:
        result = main.main(args=argv, prog_name="roads", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except ClosedOutput:
        return EXIT_CLOSED_OUTPUT
    except SystemExit as exc:
        if isinstance(exc.code, int):
            return exc.code
        if exc.code is not None:
            print(exc.code, file=sys.stderr)
            return 1
        return 0
    return result if isinstance(result, int) else 0


def run() -> None:
    """The ``roads`` console command: :func:`main`, then a prompt exit.

    Once the command has returned, every file it wrote is closed (and fsynced by
    :func:`roads.files.publish`) and every journal transaction committed. What is left is the
    interpreter dismantling its modules, and Numba's JIT engine alone takes ~0.7 s of that
    (measured: a one-line ``@njit`` function costs 0.6 s at exit). So the exit handlers run
    as usual (logging, Spark's shutdown, kept thread pools), remaining worker threads are joined,
    the output streams are flushed, and the process ends without the teardown.
    """
    code = _invoke()
    atexit._run_exitfuncs()
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            code = EXIT_CLOSED_OUTPUT if stream is sys.stdout else code
    os._exit(code)


if __name__ == "__main__":
    run()
