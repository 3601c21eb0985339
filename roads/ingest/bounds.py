"""Every bound a coup must keep, and the words used when it does not: one place, used by
the live validator (:mod:`roads.ingest.entry`) and by ingestion's check
(:mod:`roads.ingest.validate`), so a coup is refused (live) or quarantined (files) for the
same reason in the same words wherever it comes from.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime, timedelta

from roads.schema import ID_MAX, ID_PATTERN, max_coups

ID_RE = re.compile(ID_PATTERN)
#: The same pattern for polars' regex engine (Rust's ``\w`` is Unicode-aware too).
ID_PATTERN_TEXT = ID_PATTERN
CARDS_PER_SIDE = (2, 3)
#: How far a live coup's ``dealt_at`` may be from the journal's clock, by default.
DEALT_AT_TOLERANCE = timedelta(minutes=5)
#: The years (UTC, inclusive) an imported coup's ``dealt_at`` may fall in: no casino dealt
#: a coup before 1900 or will after 2200, and outside years 1-9999 a time is not even a
#: Python ``datetime`` (a store holding one could not be read back).
DEALT_AT_YEARS = (1900, 2200)

ID_CHARACTERS = ("letters, digits, '.', '_', ':', '#', '-' and spaces between them "
                 f"(at most {ID_MAX} characters)")


def id_problem(field: str, value: object) -> str | None:
    """Why a table or shoe id is not acceptable, or None."""
    if value is None or value == "":
        return f"{field} is required"
    if not isinstance(value, str):
        return f"{field} must be text"
    if len(value) > ID_MAX:
        return f"{field} is {len(value):,} characters long; ids have at most {ID_MAX}"
    if not ID_RE.match(value):
        return f"{field} {value[:20]!r} may hold only {ID_CHARACTERS}"
    return None


def lookalike(value: str, known: Iterable[str]) -> str | None:
    """A known id that reads as ``value`` but is spelt differently (``t01`` / ``T01``, the
    full-width ``Ｔ01``), or None: a typed variant of a table must not become a second table
    that screens and reports show beside the real one."""
    key = unicodedata.normalize("NFKC", value).casefold()
    for other in known:
        if other != value and unicodedata.normalize("NFKC", other).casefold() == key:
            return other
    return None


def coup_number_problem(number: int, decks: int) -> str | None:
    top = max_coups(decks)
    if not 1 <= number <= top:
        return f"coup number {number} is outside 1-{top} (the most coups {decks} decks deal)"
    return None


def coups_per_shoe_problem(count: int, decks: int) -> str | None:
    top = max_coups(decks)
    if count > top:
        return f"the shoe would hold {count:,} coups; {decks} decks deal at most {top}"
    return None


def total_problem(field: str, value: int) -> str | None:
    return None if 0 <= value <= 9 else f"{field} must be 0-9 (got {value})"


def outcome_of_totals(player: int, banker: int) -> str:
    return "B" if banker > player else "P" if player > banker else "T"


def totals_problem(outcome: str, player: int, banker: int) -> str | None:
    """An outcome that the recorded totals contradict."""
    derived = outcome_of_totals(player, banker)
    if derived != outcome:
        return (f"outcome {outcome} contradicts the totals (Player {player}, Banker {banker} "
                f"is {derived})")
    return None


def natural_problem(player: int, banker: int) -> str | None:
    """A natural needs an 8 or a 9 on two cards, and a natural coup stands on them."""
    if max(player, banker) < 8:
        return f"natural contradicts the totals (Player {player}, Banker {banker})"
    return None


def inventory_problem(card: str, seen: int, decks: int) -> str | None:
    if seen > decks:
        return f"card {card} would be seen {seen} times in this shoe; {decks} deck(s) hold {decks}"
    return None


def dealt_at_problem(dealt: datetime, earliest: datetime, latest: datetime) -> str | None:
    """A coup dealt outside the shoe's journal window (a backdated or future time)."""
    if dealt < earliest:
        return (f"dealt_at {dealt.isoformat()} is before the shoe was opened "
                f"({earliest.isoformat()}, tolerance included)")
    if dealt > latest:
        return f"dealt_at {dealt.isoformat()} is in the future (server time {latest.isoformat()})"
    return None
