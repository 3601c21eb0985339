"""What the ``--map`` options name, checked before a file is read.

``--map FIELD=COLUMN`` is parsed here (:func:`parse_map`): a field given two columns, one
column given to two fields or no column at all is a usage error, never a silent pick. The
column a ``--map`` names is its field's column, whatever other header would also match
(:func:`roads.ingest.readers.column_targets`).
"""

from __future__ import annotations

from collections.abc import Iterable

from roads.errors import InputError


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
