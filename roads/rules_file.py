"""Custom rule-set files: a TOML file read into a :class:`~roads.rules.RuleSet`.

Apart from :mod:`roads.rules` because the checks of a hand-written file are pydantic models,
and importing pydantic costs a command that only uses the presets (``roads odds``) a sixth
of a second.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, PlainValidator

from roads.rules import PRESETS, BurnRule, EndRule, RulesError, RuleSet
from roads.tomlfile import STRICT, known, parse, read_toml


def _fraction(text: object) -> Fraction:
    """Read ``"19:20"``, ``"5%"``, ``0.05`` or ``8`` as an exact fraction."""
    try:
        if isinstance(text, bool):
            raise ValueError
        if isinstance(text, int | float):
            return Fraction(str(text))
        if isinstance(text, str):
            s = text.strip()
            if s.endswith("%"):
                return Fraction(s[:-1].strip()) / 100
            if ":" in s:
                a, b = s.split(":", 1)
                return Fraction(a.strip()) / Fraction(b.strip())
            return Fraction(s)
    except (ValueError, ZeroDivisionError):
        pass
    raise ValueError(f"cannot read {text!r} as a payout/ratio (use e.g. '19:20', '5%')")


def _offered(value: object) -> Fraction | None:
    """A side bet's payout, or ``false`` / ``"none"`` where the table does not offer it."""
    return None if value is False or value == "none" else _fraction(value)


def _cut(value: object) -> tuple[int, int]:
    """``cut_card_from_end``: one position, or a ``[min, max]`` range drawn per shoe."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, list) and len(value) == 2 and \
            all(isinstance(c, int) and not isinstance(c, bool) for c in value):
        return value[0], value[1]
    raise ValueError("must be an integer or [min, max]")


Ratio = Annotated[Fraction, PlainValidator(_fraction)]
Offered = Annotated[Fraction | None, PlainValidator(_offered)]
Positive = Annotated[int, Field(ge=1, le=1000)]
Amount = Annotated[int, Field(ge=0)]


class PayoutsFile(BaseModel):
    """``[payouts]``: what each bet pays; a side bet ``false`` is not offered."""

    model_config = STRICT
    banker: Ratio | None = None
    banker_commission: Ratio | None = None
    player: Ratio | None = None
    tie: Ratio | None = None
    pair: Offered = None
    dragon7: Offered = None
    panda8: Offered = None
    ez_push: bool | None = None


class ShoeFile(BaseModel):
    """``[shoe]``: where the cut card goes and what happens when it comes out."""

    model_config = STRICT
    cut_card_from_end: Annotated[tuple[int, int], PlainValidator(_cut)] | None = None
    end_rule: EndRule | None = None
    burn_rule: BurnRule | None = None


class TableFile(BaseModel):
    """``[table]``: metadata for screens and reports (it does not change the odds)."""

    model_config = STRICT
    boxes: Positive | None = None
    players_per_box: Positive | None = None
    tie_requires_main_bet: bool = False
    one_pair_bet_per_coup: bool = False
    min_bet: Amount | None = None
    max_bet: Amount | None = None
    currency: Annotated[str, Field(max_length=8)] | None = None


class RuleSetFile(BaseModel):
    """A custom rule-set file: a preset (``base``) and what differs from it."""

    model_config = STRICT
    name: str
    base: Annotated[str, known("rule set", PRESETS)] = "standard-8"
    decks: int | None = None
    description: Annotated[str, Field(max_length=200)] | None = None
    payouts: PayoutsFile = PayoutsFile()
    shoe: ShoeFile = ShoeFile()
    table: TableFile | None = None


#: ``[payouts]`` keys whose RuleSet attribute is not ``<key>_payout``.
_SAME_NAME = ("banker_commission", "ez_push")


def load_rules(path: Path) -> RuleSet:
    """Load a custom rule set from TOML, starting from a preset (``base = ...``)."""
    return rules_from_dict(read_toml(path, "rule-set", RulesError), str(path))


def _describe_changes(spec: RuleSetFile) -> str:
    """What a custom rule set without a description of its own is: its base and what differs
    (the base's own description would describe the base, not this rule set)."""
    changed = ["decks"] if spec.decks is not None else []
    for section in ("payouts", "shoe", "table"):
        part = getattr(spec, section)
        if part is not None:
            changed += [f"{section}.{key}" for key in sorted(part.model_fields_set)]
    return (f"custom, based on {spec.base}"
            + (f"; changes {', '.join(changed)}" if changed else "; no changes"))


def rules_from_dict(data: dict[str, Any], where: str) -> RuleSet:
    """Build a rule set from the TOML structure; errors name ``where`` and the field."""
    spec = parse(RuleSetFile, data, where, RulesError)
    base = PRESETS[spec.base]
    changes: dict[str, Any] = {"name": spec.name, "source": where,
                               "description": spec.description or _describe_changes(spec)}
    if spec.decks is not None:
        changes["decks"] = spec.decks
    for key in spec.payouts.model_fields_set:
        changes[key if key in _SAME_NAME else f"{key}_payout"] = getattr(spec.payouts, key)
    for key in spec.shoe.model_fields_set:
        changes[key] = getattr(spec.shoe, key)
    if spec.table is not None:
        given = {k: getattr(spec.table, k) for k in spec.table.model_fields_set}
        changes["table"] = replace(base.table, **given)
    try:
        return replace(base, **changes)
    except RulesError as exc:
        raise RulesError(f"{where}: {exc}") from None
