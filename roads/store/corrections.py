"""Journaled corrections applied to stored coups: the only place that applies them.

Sealed and imported files hold coups as they were entered; a void or an amendment is an
event in the journal. Every reader gets coups through the store's read port, which applies
them here, so the screen, the statistics and the compliance report show the same coups.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from roads.cards import CARD_INDEX
from roads.errors import InputError
from roads.rules import MAX_DECKS
from roads.schema import CONTENT, COUP_KEY, COUPS, conform, max_coups
from roads.store.journal import Event
from roads.tableau import OUTCOMES

CORRECTION_KINDS = ("coup_voided", "coup_amended")
#: The column a *marked* read adds: null, ``amended`` or ``voided``.
MARK = "correction"


class MalformedCorrection(InputError):
    """A correction event the journal holds that roads could not have written (no coup
    number, or an amendment without its new values): named, never applied by guesswork."""


def correction_problem(e: Event) -> str | None:
    """Why a void or amendment event cannot be applied, or None. Entry points validate
    every correction before journaling it, so one of these was written past them."""
    coup = e.payload.get("coup")
    if isinstance(coup, bool) or not isinstance(coup, int) or not 1 <= coup <= _TOP:
        return f"its coup is {_shown(coup)}, not a coup number (1-{_TOP})"
    if e.kind == "coup_amended":
        new = e.payload.get("new")
        if not isinstance(new, dict):
            return "it holds no new values"
        for field, value in new.items():
            if (problem := _value_problem(field, value)) is not None:
                return f"its new {field} {_shown(value)} {problem}"
    return None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: The largest coup number any shoe deals (sixteen decks).
_TOP = max_coups(MAX_DECKS)


def _value_problem(field: str, value: object) -> str | None:
    """Why an amendment's new value is not one a coup can hold (the entry points give only
    canonical values), or None."""
    if field not in CONTENT or value is None:  # (other keys are not applied: see below)
        return None
    if field == "outcome":
        return None if value in OUTCOMES else "is not B, P or T"
    if field.endswith("_cards"):
        ok = isinstance(value, list) and 2 <= len(value) <= 3 and all(
            isinstance(c, str) and c in CARD_INDEX for c in value)
        return None if ok else "is not a hand of two or three card codes"
    if field.endswith("_total"):
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 9
        return None if ok else "is not a total 0-9"
    return None if isinstance(value, bool) else "is not true or false"


def corrections(events: Iterable[Event]) -> list[Event]:
    """The voids and amendments among ``events``; a malformed one is refused by name."""
    found = [e for e in events if e.kind in CORRECTION_KINDS]
    for e in found:
        problem = correction_problem(e)
        if problem is not None:
            raise MalformedCorrection(
                f"journal event {e.seq} ({e.kind} of {e.table_id}/{e.shoe_id}): {problem}; "
                "no entry point of roads writes such an event, so the journal was written "
                "past them (`roads store verify` names every problem)")
    return found


def touched_shoes(events: Iterable[Event]) -> set[tuple[str, str]]:
    return {(e.table_id, e.shoe_id or "") for e in corrections(events)}


def apply_corrections(coups: pl.DataFrame, events: Iterable[Event],
                      marked: bool = False) -> pl.DataFrame:
    """Apply voids and amendments in journal order; the rows come back in (table, shoe,
    coup) order.

    ``marked``: keep voided coups and add the :data:`MARK` column (what an export lists),
    instead of dropping them."""
    fixes = corrections(events)
    if marked:
        coups = coups.with_columns(pl.lit(None, dtype=pl.String).alias(MARK))
    if not fixes:
        return coups
    keys = pl.DataFrame([(e.table_id, e.shoe_id, int(e.payload["coup"])) for e in fixes],
                        schema={"table_id": pl.String, "shoe_id": pl.String, "coup": pl.Int32},
                        orient="row").unique()
    on = list(COUP_KEY)
    untouched = coups.join(keys, on=on, how="anti")
    touched = coups.join(keys, on=on, how="semi")
    if touched.is_empty():
        return coups
    rows = {(r["table_id"], r["shoe_id"], r["coup"]): r for r in touched.to_dicts()}
    for e in fixes:
        key = (e.table_id, e.shoe_id, int(e.payload["coup"]))
        if key not in rows:
            continue
        if e.kind == "coup_voided":
            if marked:
                rows[key] = {**rows[key], MARK: "voided"}
            else:
                rows.pop(key)
        else:
            new = {k: v for k, v in e.payload["new"].items() if k in COUPS}
            new.pop("dealt_at", None)  # a correction does not move the coup in time
            rows[key] = {**rows[key], **new, **({MARK: "amended"} if marked else {})}
    if not rows:
        return untouched.sort(*COUP_KEY)
    fixed = pl.DataFrame(
        [{**r, "outcome": str(r["outcome"]), "source": str(r["source"]),
          "entry": None if r["entry"] is None else str(r["entry"])} for r in rows.values()],
        schema_overrides={"player_cards": pl.List(pl.String),
                          "banker_cards": pl.List(pl.String),
                          "dealt_at": pl.Datetime("us", "UTC"),
                          **({MARK: pl.String} if marked else {})},
        infer_schema_length=None)
    fixed = conform(fixed, "coups").with_columns(fixed[MARK]) if marked else \
        conform(fixed, "coups")
    return pl.concat([untouched, fixed]).sort(*COUP_KEY)
