"""A journaled shoe as canonical rows: its coups as entered and its shoe row.

The journal is the record of live shoes until they are sealed, and the reference a sealed
shoe's file is checked against (``roads store verify``), so both go through this one
conversion. :func:`sealed_content` gives what a seal journals of the two files it writes
(their content digests and catalogue rows) from the rows in plain Python: for one shoe of
~80 coups the vectorised digests of :mod:`roads.store.digest` cost ~20 polars passes, most
of a seal's CPU at a busy floor's 25 seals a second. They are held equal to those digests
(``tests/store/test_sealed_content.py``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import polars as pl

from roads.cards import CARD_INDEX
from roads.schema import COUPS, ENTRY_METHODS, SHOES, SOURCES, TABLES, conform
from roads.store.catalog import INDEX_SCHEMA, KEYS
from roads.store.digest import (
    COUPS_TAG,
    EMPTY_SLOT,
    NO_LIST,
    NULL_FIELD,
    NULL_TEXT,
    NULL_TIME,
    RECORD,
    SHOES_TAG,
    UNKNOWN,
)
from roads.store.journal import Event
from roads.tableau import OUTCOMES

#: Payload fields of a ``coup_entered`` event that are canonical coup columns.
COUP_FIELDS = tuple(c for c in COUPS if c not in ("table_id", "shoe_id", "entered_by"))
_OVERRIDES = {"dealt_at": pl.Datetime("us", "UTC"), "player_cards": pl.List(pl.String),
              "banker_cards": pl.List(pl.String)}


def parse_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text).astimezone(UTC)


def coup_row(e: Event) -> dict[str, Any]:
    """One ``coup_entered`` event as a canonical coup record."""
    p = e.payload
    row: dict[str, Any] = {"table_id": e.table_id, "shoe_id": e.shoe_id}
    for name in COUP_FIELDS:
        row[name] = p.get(name)
    row["dealt_at"] = parse_time(p.get("dealt_at"))
    row["entered_by"] = e.actor
    return row


def coups_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Canonical coups of records as :func:`coup_row` makes them."""
    if not rows:
        return pl.DataFrame(schema=COUPS)
    return _canonical(rows, "coups", _OVERRIDES)


def _canonical(rows: list[dict[str, Any]], table: str,
               overrides: dict[str, pl.DataType]) -> pl.DataFrame:
    """Records as a canonical table, built column by column through Arrow, whose
    conversion of Python lists and times is written in C (polars' own from a list of
    records took ~5 ms for a shoe's 80 coups, most of a seal's work). Records that do not
    convert that way — a payload of the wrong type, in a journal someone edited — take
    polars' path, so its errors are the ones given."""
    import pyarrow as pa

    columns = TABLES[table]
    try:
        arrow = pa.table({name: pa.array([r.get(name) for r in rows],
                                         type=_arrow_type(dtype))
                          for name, dtype in columns.items()})
    except (ValueError, TypeError, OverflowError):  # Arrow's errors derive from these
        return conform(pl.DataFrame(rows, schema_overrides=overrides,
                                    infer_schema_length=None), table)
    return conform(pl.from_arrow(arrow), table)  # type: ignore[arg-type]


def _arrow_type(dtype: pl.DataType) -> Any:
    """The loose Arrow type of a canonical column (text, 64-bit integers, UTC times),
    which :func:`~roads.schema.conform` then casts strictly, as for polars' frames."""
    import pyarrow as pa

    if isinstance(dtype, pl.Datetime):
        return pa.timestamp("us", tz="UTC")
    if isinstance(dtype, pl.List):
        return pa.large_list(pa.large_string())
    if dtype.is_integer():
        return pa.int64()
    if dtype == pl.Boolean():
        return pa.bool_()
    return pa.large_string()


def shoe_frames(events: list[Event]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Canonical coups (as entered) and the shoe row of one journaled shoe."""
    rows, shoe = shoe_records(events)
    return coups_frame(rows), shoe_frame(shoe)


def shoe_records(events: list[Event]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One journaled shoe's coups (as entered) and its shoe row, as records."""
    opened = next(e for e in events if e.kind == "shoe_opened")
    rows = [coup_row(e) for e in events if e.kind == "coup_entered"]
    rule_set = opened.payload.get("rule_set") or {}
    cards = [len(r["player_cards"]) + len(r["banker_cards"]) for r in rows
             if r["player_cards"] is not None]
    times = [r["dealt_at"] for r in rows if r["dealt_at"] is not None]
    return rows, {
        "table_id": opened.table_id, "shoe_id": opened.shoe_id,
        "rules": opened.payload["rules"], "decks": rule_set.get("decks"),
        "burn_cards": opened.payload.get("burn_cards"),
        "cut_card_index": opened.payload.get("cut_card_index"), "coups": len(rows),
        "cards_dealt": sum(cards) if len(cards) == len(rows) and rows else None,
        "started_at": min(times) if times else parse_time(opened.at),
        "ended_at": max(times) if times else None, "seed": None,
        "source": opened.payload.get("source", "live"),
    }


def shoe_frame(shoe: dict[str, Any]) -> pl.DataFrame:
    """A shoe record as :func:`shoe_records` gives it, as a canonical shoes row."""
    return _canonical([shoe], "shoes", {"burn_cards": pl.List(pl.String),
                                        "started_at": pl.Datetime("us", "UTC"),
                                        "ended_at": pl.Datetime("us", "UTC")})


# -- a sealed shoe's files as Arrow tables ----------------------------------------------------

@functools.cache
def file_schema(table: str) -> Any:
    """The Arrow schema of a canonical table's part file as polars writes it (its Enums
    ordered ``uint8`` dictionaries of every category, with polars' field metadata), taken
    from polars itself once: a table built with it reads back as the canonical frame."""
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pl.DataFrame(schema=TABLES[table]).write_parquet(buffer)
    buffer.seek(0)
    return pq.read_schema(buffer).remove_metadata()


@functools.cache
def _categories(table: str) -> dict[str, tuple[dict[str, int], Any]]:
    """Each Enum column's (or Enum list's) codes by label and its dictionary."""
    import pyarrow as pa

    out = {}
    for name, dtype in TABLES[table].items():
        enum = dtype.inner if isinstance(dtype, pl.List) else dtype
        if isinstance(enum, pl.Enum):
            labels = list(enum.categories)
            out[name] = ({c: i for i, c in enumerate(labels)}, pa.array(labels, pa.string()))
    return out


#: The Python type each plain column's values must have, exactly (``bool`` is an ``int``
#: too; an aware ``datetime`` is of type ``datetime``).
_PLAIN = {pl.String: str, pl.Boolean: bool, pl.Datetime: datetime}


def arrow_part(records: list[dict[str, Any]], table: str) -> Any:
    """Canonical records (values of their canonical Python types, as :func:`coup_row` and
    :func:`shoe_records` make them) as the Arrow table of their part file, typed as the
    file holds them; None when a value is not of its type or not in its set (polars'
    conversion then decides, and raises what it raises).

    A seal writes its 80 rows this way: building a polars frame and casting it to the
    canonical types cost more than encoding the file."""
    import pyarrow as pa

    schema, enums, columns = file_schema(table), _categories(table), []
    try:
        for (name, dtype), target in zip(TABLES[table].items(), schema, strict=True):
            values = [r[name] for r in records]
            if name in enums:
                codes, labels = enums[name]
                if isinstance(dtype, pl.List):
                    columns.append(_enum_lists(values, codes, labels, target.type))
                else:
                    columns.append(pa.DictionaryArray.from_arrays(
                        pa.array([None if v is None else codes[v] for v in values], pa.uint8()),
                        labels, ordered=True))
                continue
            kind = next((t for base, t in _PLAIN.items() if isinstance(dtype, base)), int)
            if not {type(v) for v in values} <= {kind, type(None)}:
                return None
            columns.append(pa.array(values, target.type))
        return pa.Table.from_arrays(columns, schema=schema)
    except (KeyError, TypeError, ValueError, OverflowError):  # Arrow's errors derive from these
        return None


def _enum_lists(values: list[Any], codes: dict[str, int], labels: Any, kind: Any) -> Any:
    """A column of card lists (or nulls) as Arrow lists of dictionary codes."""
    import pyarrow as pa

    offsets, flat, nulls = [0], [], []
    for hand in values:
        if hand is not None and not isinstance(hand, list):
            raise TypeError("a hand is a list of cards")
        nulls.append(hand is None)
        flat += [codes[c] for c in hand or ()]
        offsets.append(len(flat))
    child = pa.DictionaryArray.from_arrays(pa.array(flat, pa.uint8()), labels, ordered=True)
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), child, type=kind,
                                         mask=pa.array(nulls) if any(nulls) else None)


# -- what a seal journals of its two files --------------------------------------------------

#: :data:`roads.store.digest.RECORD` as a struct (packed, little-endian).
_RECORD = struct.Struct("<iB3B3BbbBBBqBBI2x")
assert _RECORD.size == RECORD.itemsize
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_OUTCOME = {o: i for i, o in enumerate(OUTCOMES)}
_SOURCE = {s: i for i, s in enumerate(SOURCES)}
_ENTRY = {e: i for i, e in enumerate(ENTRY_METHODS)}
_ISO = "%Y-%m-%dT%H:%M:%S.%f+00:00"  # as the shoe index keeps times (store.shoe_index_frame)


@dataclass(frozen=True, slots=True)
class Content:
    """What a file event journals of one part file besides its bytes: its content digest,
    the shoes a coups file holds (none for a shoes file), the shoe index rows of a shoes
    file."""

    digest: str
    shoes: pl.DataFrame
    index: pl.DataFrame | None = None


def sealed_content(rows: list[dict[str, Any]], shoe: dict[str, Any]
                   ) -> tuple[Content, Content] | None:
    """The :class:`Content` of a sealed shoe's coups file (``rows``: its coups as
    :func:`coup_row` makes them, which :func:`coups_frame` converts without changing a
    value) and of its shoes file (``shoe``: its record with canonical values, as a
    canonical frame's row or a record :func:`arrow_part` took); None when they are not one
    shoe's coups in rising coup order with values of their canonical types (the
    vectorised digests then decide, and raise what they raise)."""
    head = tuple(shoe[name] for name in SHOES)
    if not rows or any((r["table_id"], r["shoe_id"]) != head[:2] for r in rows):
        return None
    table_id, shoe_id = head[0], head[1]
    try:
        if any(not a["coup"] < b["coup"] for a, b in pairwise(rows)):
            return None
        records = b"".join(_record(r) for r in rows)
        texts = "".join(r["entered_by"] or "" for r in rows).encode()
    except (KeyError, TypeError, ValueError, struct.error):
        return None
    digest = hashlib.sha256(COUPS_TAG + f"{table_id}\0{shoe_id}\0".encode() + records
                            + texts).hexdigest()
    leaf = hashlib.sha256(f"{table_id}\t{shoe_id}\t{digest}\n".encode()).digest()
    line = "\t".join(_shoe_field(v, d) for v, d in zip(head, SHOES.values(), strict=True))
    keys = pl.DataFrame([(table_id, shoe_id)], schema=KEYS, orient="row")
    named = dict(zip(SHOES, head, strict=True))
    index = pl.DataFrame([(table_id, shoe_id, named["rules"], named["decks"], named["coups"],
                           *(None if t is None else t.astimezone(UTC).strftime(_ISO)
                             for t in (named["started_at"], named["ended_at"])),
                           named["source"])], schema=INDEX_SCHEMA, orient="row")
    return (Content(hashlib.sha256(leaf).hexdigest(), keys),  # a shoes file holds no coups:
            Content(hashlib.sha256(SHOES_TAG + f"{line}\n".encode()).hexdigest(),
                    pl.DataFrame(schema=KEYS), index))


def _record(r: dict[str, Any]) -> bytes:
    """One coup record as its 32-byte digest record (TypeError for a value not of its
    canonical type)."""
    flags = [r["natural"], r["player_pair"], r["banker_pair"]]
    dealt, who = r["dealt_at"], r["entered_by"]
    if not all(f is None or isinstance(f, bool) for f in flags) or not (
            dealt is None or isinstance(dealt, datetime)) or not (
            who is None or isinstance(who, str)):
        raise TypeError("not a canonical value")
    return _RECORD.pack(
        r["coup"], _OUTCOME[r["outcome"]], *_hand(r["player_cards"]),
        *_hand(r["banker_cards"]), _total(r["player_total"]), _total(r["banker_total"]),
        *(UNKNOWN if f is None else int(f) for f in flags),
        NULL_TIME if dealt is None else (dealt - _EPOCH) // _MICRO,
        _code(_SOURCE, r["source"]), _code(_ENTRY, r["entry"]),
        NULL_TEXT if who is None else len(who.encode()))


def _total(value: int | None) -> int:
    return -1 if value is None else value


def _code(codes: dict[str, int], label: str | None) -> int:
    """An Enum label's position, 255 for null (as the vectorised records fill it)."""
    return 255 if label is None else codes[label]


def _hand(cards: list[str] | None) -> list[int]:
    if cards is None:
        return [NO_LIST] * 3
    if not isinstance(cards, list):
        raise TypeError("a hand is a list of cards")
    return ([CARD_INDEX[c] for c in cards] + [EMPTY_SLOT] * 3)[:3]


def _shoe_field(value: Any, dtype: pl.DataType) -> str:
    """One shoes column as its text in the shoes digest's line."""
    if value is None:
        return NULL_FIELD
    if isinstance(dtype, pl.List):
        return ",".join(value)
    if isinstance(dtype, pl.Datetime):
        return str((value - _EPOCH) // _MICRO)
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
    return str(value)
