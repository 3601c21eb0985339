"""One coup from a live source, checked and made canonical: the live validator.

Every live source (the HTTP API, the operator screen's keypad and card entry, a card-reading
shoe, the demo dealers) converts what it received into a :class:`CoupEntry`
(:mod:`roads.ingest.sources`), and :func:`check_coup` turns it into the canonical fields or
refuses it with :class:`EntryError` naming the field. The bounds and their wording are
:mod:`roads.ingest.bounds`, shared with ingestion's check, which quarantines or flags the same
things instead of refusing them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from roads.cards import CardError, parse_cards
from roads.errors import InputError
from roads.ingest import bounds
from roads.schema import ENTRY_METHODS, ENTRY_SOURCE
from roads.tableau import OUTCOMES, CoupError, expected_hands


class EntryError(InputError):
    """A live coup refused; ``field`` names what is wrong (the API's 422 ``loc``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True, slots=True)
class CoupEntry:
    """A coup as a live source gave it: an outcome (keypad) or the cards (card entry, a
    card-reading shoe), optionally with totals and flags to be checked against them."""

    outcome: str | None = None
    player_cards: tuple[str, ...] | None = None
    banker_cards: tuple[str, ...] | None = None
    player_pair: bool | None = None
    banker_pair: bool | None = None
    natural: bool | None = None
    player_total: int | None = None
    banker_total: int | None = None
    dealt_at: datetime | None = None
    method: str = "api"

    @property
    def source(self) -> str:
        return ENTRY_SOURCE[self.method]


@dataclass(slots=True)
class ShoeContext:
    """What the validator needs to know of the shoe a coup goes into."""

    decks: int
    opened_at: datetime
    coups: int = 0  # coups already entered
    seen: Counter[str] = field(default_factory=Counter)  # cards already out, burn included

    def add(self, cards: Iterable[str]) -> None:
        self.seen.update(cards)


def _check_totals(entry: CoupEntry) -> None:
    for name in ("player_total", "banker_total"):
        value = getattr(entry, name)
        if value is not None and (problem := bounds.total_problem(name, value)):
            raise EntryError(name, problem)


def _from_cards(entry: CoupEntry) -> dict[str, Any]:
    try:
        player = parse_cards(list(entry.player_cards or ()))
        banker = parse_cards(list(entry.banker_cards or ()))
    except CardError as exc:
        side = "player_cards" if entry.player_cards and _unreadable(entry.player_cards) \
            else "banker_cards"
        raise EntryError(side, str(exc)) from None
    for name, hand in (("player_cards", player), ("banker_cards", banker)):
        if len(hand) not in bounds.CARDS_PER_SIDE:
            raise EntryError(name, f"{name}: each side needs two or three cards "
                                   f"(got {len(hand)})")
    try:
        coup = expected_hands(player, banker)
    except (CoupError, InputError) as exc:
        raise EntryError("player_cards", f"impossible coup: {exc}") from None
    if (list(coup.player_cards), list(coup.banker_cards)) != (player, banker):
        raise EntryError("player_cards" if len(coup.player_cards) != len(player)
                         else "banker_cards",
                         f"impossible coup: by the tableau the Player takes "
                         f"{len(coup.player_cards)} and the Banker {len(coup.banker_cards)} "
                         "cards")
    derived = {"outcome": coup.outcome, "player_total": coup.player_total,
               "banker_total": coup.banker_total, "natural": coup.natural,
               "player_pair": coup.player_pair, "banker_pair": coup.banker_pair}
    for name, value in derived.items():
        given = getattr(entry, name)
        if given is not None and given != value:
            raise EntryError(name, f"{name} {given!r} does not match the cards ({value!r})")
    return {**derived, "player_cards": player, "banker_cards": banker}


def _unreadable(cards: Iterable[str]) -> bool:
    try:
        parse_cards(list(cards))
    except CardError:
        return True
    return False


def _from_outcome(entry: CoupEntry) -> dict[str, Any]:
    if entry.outcome not in OUTCOMES:
        raise EntryError("outcome", f"outcome must be B, P or T (got {entry.outcome!r})")
    _check_totals(entry)
    p, b = entry.player_total, entry.banker_total
    if p is not None and b is not None:
        if problem := bounds.totals_problem(entry.outcome, p, b):
            raise EntryError("outcome", problem)
        if entry.natural and (problem := bounds.natural_problem(p, b)):
            raise EntryError("natural", problem)
    return {"outcome": entry.outcome, "player_cards": None, "banker_cards": None,
            "player_total": p, "banker_total": b, "natural": entry.natural,
            "player_pair": entry.player_pair, "banker_pair": entry.banker_pair}


def canonical_fields(entry: CoupEntry) -> dict[str, Any]:
    """The canonical content of a coup on its own (derived from the cards where there are
    cards); :class:`EntryError` when the coup is impossible by itself."""
    if entry.method not in ENTRY_METHODS:
        raise EntryError("method", f"unknown entry method {entry.method!r}")
    if entry.player_cards is not None or entry.banker_cards is not None:
        if entry.player_cards is None or entry.banker_cards is None:
            raise EntryError("player_cards" if entry.player_cards is None else "banker_cards",
                             "give both player_cards and banker_cards, or neither")
        return _from_cards(entry)
    return _from_outcome(entry)


def check_coup(entry: CoupEntry, shoe: ShoeContext, now: datetime | None = None,
               tolerance: timedelta = bounds.DEALT_AT_TOLERANCE,
               number: int | None = None,
               fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """The canonical fields of a coup entered into ``shoe`` (coup number, source, method and
    ``dealt_at`` included), or :class:`EntryError`: impossible by itself, beyond what the
    shoe can hold, a card the shoe has run out of, or dealt outside the shoe's journal time.

    ``fields``: :func:`canonical_fields` of ``entry`` when the caller has them already (the
    live service checks a coup on its own before it takes the journal's write lock, and
    only the shoe-dependent checks inside it)."""
    fields = canonical_fields(entry) if fields is None else fields
    number = shoe.coups + 1 if number is None else number
    if problem := bounds.coup_number_problem(number, shoe.decks):
        raise EntryError("coup", problem)
    if fields["player_cards"] is not None:
        count = Counter(fields["player_cards"] + fields["banker_cards"])
        for card, n in count.items():
            if problem := bounds.inventory_problem(card, shoe.seen[card] + n, shoe.decks):
                raise EntryError("player_cards" if card in fields["player_cards"]
                                 else "banker_cards", problem)
    now = now or datetime.now(UTC)
    dealt = entry.dealt_at or now
    if dealt.tzinfo is None:
        dealt = dealt.replace(tzinfo=UTC)
    try:
        in_utc = dealt.astimezone(UTC)
    except OverflowError:  # (9999-12-31T23:59:59-12:00 is in the year 10000 in UTC)
        raise EntryError("dealt_at", f"{dealt.isoformat()} is outside the years 1-9999 in "
                                     "UTC") from None
    if problem := bounds.dealt_at_problem(in_utc, shoe.opened_at - tolerance, now + tolerance):
        raise EntryError("dealt_at", problem)
    return {"coup": number, **fields, "dealt_at": in_utc.isoformat(timespec="microseconds"),
            "source": entry.source, "entry": entry.method}
