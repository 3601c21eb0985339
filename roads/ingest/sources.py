"""One converter per live source, each into a :class:`~roads.ingest.entry.CoupEntry`.

The HTTP API (systems and card-reading shoes), the operator screen and the demo dealers each
hand their input to one function here; files go through :mod:`roads.ingest.readers` and
the engine through :mod:`roads.ingest.engine_batches`. The request models are built from the
canonical schema (:data:`roads.schema.ENTRY_FIELDS`), so a field cannot be added to one and
forgotten in the other, and their types are strict: ``"yes"`` is not a boolean, ``true`` is
not coup 1.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import polars as pl
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    create_model,
    field_validator,
    model_validator,
)

from roads.cards import CardError, parse_cards
from roads.ingest.bounds import ID_CHARACTERS
from roads.ingest.entry import CoupEntry, EntryError
from roads.schema import COUPS, ENTRY_FIELDS, ID_MAX, ID_PATTERN, Outcome

Id = Annotated[StrictStr, Field(min_length=1, max_length=ID_MAX, pattern=ID_PATTERN,
                                description=f"An id: {ID_CHARACTERS}.")]
Cards = Annotated[list[StrictStr], Field(min_length=2, max_length=3)]
#: A rule set is named (a preset, or a file the site registered), never given as a path.
RuleSetName = Annotated[StrictStr, Field(min_length=1, max_length=40,
                                         pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
Reason = Annotated[StrictStr, Field(min_length=1, max_length=500)]


def _field_type(name: str, dtype: pl.DataType) -> tuple[Any, Any]:
    """The request type of a canonical coup column (optional: a source may leave it out)."""
    if name == "shoe_id":
        return Id | None, Field(None, description="With `coup`, makes the post idempotent.")
    if name == "coup":
        return StrictInt | None, Field(None, ge=1, le=208,
                                       description="The coup number in the shoe.")
    if isinstance(dtype, pl.Enum) and dtype == Outcome:
        return Literal["B", "P", "T"] | None, Field(None)
    if isinstance(dtype, pl.List):
        return Cards | None, Field(None)
    if name.endswith("_total"):
        return StrictInt | None, Field(None, ge=0, le=9)
    if dtype == pl.Boolean():
        return StrictBool | None, Field(None)
    if isinstance(dtype, pl.Datetime):
        return datetime | None, Field(None)
    raise TypeError(f"no request type for canonical column {name}")  # pragma: no cover


def _parsed_cards(value: list[str] | None) -> list[str] | None:
    """Card codes as the schema writes them; a bad code is the field's error."""
    try:
        return None if value is None else parse_cards(value)
    except CardError as exc:
        raise ValueError(str(exc)) from None


class _CoupBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("player_cards", "banker_cards", check_fields=False)
    @classmethod
    def _cards(cls, value: list[str] | None) -> list[str] | None:
        return _parsed_cards(value)

    @model_validator(mode="after")
    def _complete(self) -> _CoupBase:
        data = self.__dict__
        if (data.get("player_cards") is None) != (data.get("banker_cards") is None):
            raise ValueError("give both player_cards and banker_cards, or neither")
        if data.get("outcome") is None and data.get("player_cards") is None:
            raise ValueError("give the outcome or the cards")
        if (data.get("shoe_id") is None) != (data.get("coup") is None):
            raise ValueError("give both shoe_id and coup, or neither")
        return self


_COUP_FIELDS: dict[str, Any] = {
    name: _field_type(name, COUPS[name]) for name in ENTRY_FIELDS if name != "table_id"}
_COUP_FIELDS["device"] = (Literal["system", "shoe"], Field(
    "system", description="`shoe` when a card-reading shoe posts; recorded as how the coup "
                          "was entered."))
#: ``POST /api/tables/{table}/coups``: an outcome (keypad systems) or both hands' cards.
CoupIn = create_model("CoupIn", __base__=_CoupBase, **_COUP_FIELDS)


def from_api(coup: BaseModel) -> tuple[CoupEntry, str | None, int | None]:
    """An API coup as an entry, with the shoe and number it names (if any)."""
    d = coup.__dict__
    method = "shoe" if d["device"] == "shoe" else "api"
    return (CoupEntry(d["outcome"], _tuple(d["player_cards"]), _tuple(d["banker_cards"]),
                      d["player_pair"], d["banker_pair"], d["natural"], d["player_total"],
                      d["banker_total"], d["dealt_at"], method), d["shoe_id"], d["coup"])


def _tuple(cards: list[str] | None) -> tuple[str, ...] | None:
    return None if cards is None else tuple(cards)


class ShoeIn(BaseModel):
    """``POST /api/tables/{table}/shoes``: open a shoe."""

    model_config = ConfigDict(extra="forbid")
    shoe_id: Id
    rules: RuleSetName = "standard-8"
    burn_cards: list[StrictStr] | None = Field(None, max_length=11)
    cut_card_index: StrictInt | None = Field(None, ge=0, le=832)

    @field_validator("burn_cards")
    @classmethod
    def _cards(cls, value: list[str] | None) -> list[str] | None:
        return _parsed_cards(value)


class Amendment(BaseModel):
    """What an amended coup becomes: an outcome with its flags, or the cards."""

    model_config = ConfigDict(extra="forbid")
    outcome: Literal["B", "P", "T"] | None = None
    player_cards: Cards | None = None
    banker_cards: Cards | None = None
    player_pair: StrictBool | None = None
    banker_pair: StrictBool | None = None
    natural: StrictBool | None = None
    player_total: StrictInt | None = Field(None, ge=0, le=9)
    banker_total: StrictInt | None = Field(None, ge=0, le=9)

    def entry(self, method: str) -> CoupEntry:
        return CoupEntry(self.outcome, _tuple(self.player_cards), _tuple(self.banker_cards),
                         self.player_pair, self.banker_pair, self.natural, self.player_total,
                         self.banker_total, None, method)


class CorrectionIn(BaseModel):
    """``POST /api/tables/{table}/corrections``: ask for a void or an amendment."""

    model_config = ConfigDict(extra="forbid")
    shoe_id: Id
    coup: StrictInt = Field(ge=1, le=208)
    action: Literal["void", "amend"]
    amended: Amendment | None = Field(None, description="The corrected coup (amend only).")
    reason: Reason

    @model_validator(mode="after")
    def _amended(self) -> CorrectionIn:
        if self.action == "amend" and self.amended is None:
            raise ValueError("an amendment needs `amended` (the corrected coup)")
        if self.action == "void" and self.amended is not None:
            raise ValueError("a void takes no `amended` coup")
        return self


class DecisionIn(BaseModel):
    """``POST /api/corrections/{request}``: a supervisor's decision."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "reject"]
    note: Annotated[StrictStr, Field(max_length=500)] = ""


class OperatorCoup(BaseModel):
    """The operator screen's entry: the keypad (outcome and toggles) or typed cards."""

    model_config = ConfigDict(extra="ignore")
    outcome: Literal["B", "P", "T"] | None = None
    player_pair: StrictBool = False
    banker_pair: StrictBool = False
    natural: StrictBool = False
    player_cards: Annotated[StrictStr, Field(max_length=40)] = ""
    banker_cards: Annotated[StrictStr, Field(max_length=40)] = ""


def from_operator(data: dict[str, Any]) -> CoupEntry:
    """An operator screen entry; cards when any were typed, else the keypad."""
    try:
        form = OperatorCoup.model_validate(data)
    except ValueError as exc:
        raise EntryError("entry", _first_error(exc)) from None
    player, banker = form.player_cards.strip(), form.banker_cards.strip()
    if player or banker:
        return CoupEntry(player_cards=_split(player), banker_cards=_split(banker),
                         method="cards")
    return CoupEntry(outcome=form.outcome, player_pair=form.player_pair,
                     banker_pair=form.banker_pair, natural=form.natural, method="keypad")


def _split(text: str) -> tuple[str, ...] | None:
    parts = tuple(text.replace(",", " ").split())
    return parts or None


def from_dealer(player: tuple[str, ...], banker: tuple[str, ...]) -> CoupEntry:
    """A coup the demo dealers dealt with the engine."""
    return CoupEntry(player_cards=player, banker_cards=banker, method="demo")


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "entry"
        return f"{where}: {first['msg']}"
    return str(exc)
