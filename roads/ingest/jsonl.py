"""JSON lines: journal events, the export's ``journal.jsonl`` (and :meth:`Event.to_json`).

Each ``coup_entered`` event is a coup: ``table_id`` and ``shoe_id`` at the top, the coup's
fields in its ``payload`` object. Events of the journal's other kinds hold no coup and are
passed over, and so is a redacted link (an export's event outside its slice). Any other
line is quarantined whole (field ``line``, like a ragged CSV line) with what is wrong: JSON
that does not parse, a value that is not an object, an object that is no journal event (a
flat ``{"table_id": ..., "coup": ...}`` row: no reader takes that form), an unknown kind, a
payload that is not an object, a field of the wrong JSON type. The reasons name no line
(``row`` does), so that the report's counts by reason stay few.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from roads.ingest.labels import FIELDS
from roads.ingest.ragged import RAGGED
from roads.store.journal import KINDS

SCHEMA = {"_row": pl.Int64, "_raw": pl.String, RAGGED: pl.String,
          **{f: pl.String for f in FIELDS}}
#: What a line must be, said in every reason for a line that is no journal event.
FORM = ("JSON lines are read as journal events, as the export's journal.jsonl holds them: a "
        "coup from each object of \"kind\" \"coup_entered\" (table_id, shoe_id, payload); "
        "save other JSON as CSV")
_VALUES = ("coup", "outcome", "player_total", "banker_total", "natural", "player_pair",
           "banker_pair", "dealt_at")


class _Refused(Exception):
    """Why a line is quarantined whole."""


def _kind_of(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false",
            int: "a number", float: "a number", type(None): "null"}.get(type(value), "a value")


def _id(event: dict[str, object], name: str) -> str | None:
    value = event.get(name)
    if value is None or isinstance(value, str):
        return value
    raise _Refused(f"{name} is {_kind_of(value)}, not text")


def _value(name: str, value: object) -> str | None:
    """A payload field as the text the validation reads (``true``/``false`` for a bool)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str | int | float):
        return str(value)
    raise _Refused(f"payload {name} is {_kind_of(value)}, not a value")


def _hand(name: str, cards: object) -> str | None:
    """A hand: a list of cards (as exported) or their text (``"9h 4s"``, as in a CSV)."""
    if cards is None or isinstance(cards, str):
        return cards
    if not isinstance(cards, list):
        raise _Refused(f"payload {name} is {_kind_of(cards)}, not a list of cards")
    odd = [c for c in cards if isinstance(c, bool) or not isinstance(c, str | int)]
    if odd:
        raise _Refused(f"payload {name} holds {_kind_of(odd[0])}, not a card")
    return " ".join(str(c) for c in cards)


def _fields(text: str) -> dict[str, str | None] | None:
    """The coup a line gives, None for an event that holds none; :class:`_Refused` else."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Refused(f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise _Refused("invalid JSON: nested too deeply") from None
    except ValueError:  # (an integer of more digits than Python converts, 4,300)
        raise _Refused("invalid JSON: a number too long to read") from None
    if not isinstance(event, dict):
        raise _Refused(f"{_kind_of(event)}, not a JSON object: {FORM}")
    if "kind" not in event:
        if event.get("redacted") is True:
            return None
        raise _Refused(f"an object without \"kind\", not a journal event: {FORM}")
    kind = event["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        shown = repr(kind) if isinstance(kind, str) and len(kind) <= 40 else _kind_of(kind)
        raise _Refused(f"\"kind\" {shown} is no journal event kind: {FORM}")
    if kind != "coup_entered":
        return None
    payload = event.get("payload", {})
    if not isinstance(payload, dict):
        raise _Refused(f"payload is {_kind_of(payload)}, not an object")
    fields = {"table_id": _id(event, "table_id"), "shoe_id": _id(event, "shoe_id"),
              "player_cards": _hand("player_cards", payload.get("player_cards")),
              "banker_cards": _hand("banker_cards", payload.get("banker_cards")),
              **{name: _value(name, payload.get(name)) for name in _VALUES}}
    for value in fields.values():
        if value is not None and not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                raise _Refused("text that is not Unicode (an unpaired surrogate escape "
                               "such as \\ud800)") from None
    return fields


def rows(path: Path) -> Iterator[tuple[object, ...]]:
    """The staging rows of a JSON lines file, line by line (:data:`SCHEMA` order)."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            text = line.strip().lstrip("\ufeff")
            if not text:
                continue
            try:
                fields = _fields(text)
            except _Refused as why:
                raw = json.dumps({"line": number, "text": text}, ensure_ascii=False)
                yield (number, raw, str(why), *(None,) * len(FIELDS))
                continue
            if fields is not None:
                yield (number, text, None, *(fields[f] for f in FIELDS))
