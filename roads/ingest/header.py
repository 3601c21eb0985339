"""What a CSV header and the ``--map`` options name, checked before a column is read.

``--map FIELD=COLUMN`` is parsed here (:func:`parse_map`): a field given two columns, one
column given to two fields or no column at all is a usage error, never a silent pick. The
column a ``--map`` names is its field's column, whatever other header would also match
(:func:`roads.ingest.readers.column_targets`).

A header that names one column twice (``Result,Result``, or ``Player Cards,player_cards``:
one field's header, however written) stops the file (:func:`check_repeats`): polars read
the first and renamed the other ``Result_duplicated_0``, a name that is not in the file. A
blank header cell is named by its position (:func:`blank_columns`: "column 5 (no name)").
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from roads.errors import InputError
from roads.ingest.labels import HEADER_SPELLINGS


def normalise_header(name: str) -> str:
    """A header as matched: lower case, without spaces, punctuation, accents or a BOM
    (``Player Cards``, ``player_cards``, ``playerCards`` and ``PLAYER-CARDS`` are one)."""
    text = name.replace("\ufeff", "").replace("№", " ").casefold()
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return re.sub(r"[\s_\-.,:;#()\[\]/\\'\"]+", "", text)


#: Normalised header -> canonical field.
HEADER_SYNONYMS = {normalise_header(spelling): name
                   for name, spellings in HEADER_SPELLINGS.items() for spelling in spellings}


def parse_map(items: Iterable[str], fields: tuple[str, ...]) -> dict[str, str]:
    """``--map FIELD=COLUMN`` options as field -> column; :class:`InputError` for an option
    that is not FIELD=COLUMN (FIELD one of ``fields``), a field given two columns, or one
    column given to two fields."""
    mapping: dict[str, str] = {}
    for item in items:
        name, sep, column = item.partition("=")
        if not sep or name not in fields or not column:
            raise InputError(f"--map {item!r}: use FIELD=COLUMN with FIELD one of "
                             f"{', '.join(fields)} and COLUMN a header of the file")
        if name in mapping and mapping[name] != column:
            raise InputError(f"--map gives {name} twice ({mapping[name]!r} and {column!r}); "
                             "give one column for each field")
        other = next((f for f, c in mapping.items() if c == column and f != name), None)
        if other is not None:
            raise InputError(f"--map gives column {column!r} to both {other} and {name}; a "
                             "column is read for one field")
        mapping[name] = column
    return mapping


#: The most of a file read for its header (the longest header line
#: :func:`roads.ingest.readers.check_header` lets through).
HEADER_BYTES = 1 << 20


def header_cells(path: Path, sep: str) -> list[str]:
    """The header of a CSV file as written: its first record (RFC 4180 quoting, a quoted
    field may hold a line end), bad UTF-8 replaced and a leading byte-order mark dropped."""
    with path.open("rb") as fh:
        text = fh.read(HEADER_BYTES).decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        return next(csv.reader(io.StringIO(text, newline=""), delimiter=sep, quotechar='"',
                               strict=False), [])
    except csv.Error as exc:
        raise InputError(f"{path}: its header cannot be read as CSV: {exc}") from None


def _same(cell: str) -> str:
    """What two header cells name one column by: a field's spelling, however written
    (``Player Cards``, ``player_cards``), else the text."""
    name = normalise_header(cell)
    return name if name in HEADER_SYNONYMS else cell


def check_repeats(path: Path, cells: list[str]) -> None:
    """Refuse a header that names one column twice: the same text, or one spelling of a
    field written two ways. (Two spellings of one field, ``Result`` and ``Winner``, are two
    columns: the first is read and the other listed with a hint.) Blank cells are no names
    (:func:`blank_columns`)."""
    seen: dict[str, int] = {}
    for number, cell in enumerate(cells, start=1):
        if not cell.strip():
            continue
        name = _same(cell)
        if name in seen:
            first = cells[seen[name] - 1]
            what = f" are both {cell!r}" if first == cell else \
                f", {first!r} and {cell!r}, both name {HEADER_SYNONYMS[name]}"
            raise InputError(f"{path}: columns {seen[name]} and {number} of the header{what}; "
                             "nothing was stored: rename or remove one")
        seen[name] = number


def blank_columns(cells: list[str], columns: list[str]) -> dict[str, str]:
    """Polars' name of each column with a blank header cell (``""``, ``_duplicated_0``, ...)
    -> how the report names it, "column N (no name)"; ``cells`` is the header as written,
    ``columns`` polars' names (nothing when the two do not line up)."""
    if len(cells) != len(columns):
        return {}
    return {column: f"column {number} (no name)"
            for number, (cell, column) in enumerate(zip(cells, columns, strict=True), 1)
            if not cell.strip()}
