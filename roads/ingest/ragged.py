"""CSV lines with another number of fields than the header: found, so none is cut short.

Polars' reader (the general path) either drops a line's extra fields
(``truncate_ragged_lines=True``) or refuses the whole file, and fills a short line's missing
fields with nulls, which no later step can tell from empty fields. So before polars reads a
CSV file, one compiled pass walks its bytes the way RFC 4180 splits them (a separator or a
line end inside a quoted field is text; ``""`` inside one is a quote) and names every data
row whose field count is not the header's; the reader then quarantines those rows whole,
their line kept verbatim. A blank line is not counted as ragged (polars reads it as a row
of nulls, which the check quarantines already). The pass reads the file a block at a time,
carrying its state over, so memory does not grow with the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

#: The staging column naming why a CSV row is quarantined whole (its field count), and the
#: quarantine's ``field`` for such a row (it is the line, not one of its fields).
RAGGED = "_ragged"
RAGGED_FIELD = "line"
#: Bytes read at a time, and ragged rows a kernel call reports before it returns.
BLOCK_BYTES = 8 << 20
_BATCH = 4096
_QUOTE = 34
# Walk states: at a field's start, inside an unquoted field, inside a quoted field, just
# after a quote that closed a quoted field (a quote next is a doubled one: back inside).
_START, _PLAIN, _QUOTED, _CLOSED = 0, 1, 2, 3
# Carried state slots: walk state, fields so far, data row (0: the header), file line,
# where the current line began, its first line, the header's width, the byte before.
_S_WALK, _S_FIELDS, _S_ROW, _S_LINE, _S_BEGAN, _S_FIRST_LINE, _S_WIDTH, _S_BEFORE = range(8)


@nb.njit(cache=True)
def _walk(data: np.ndarray, at: int, offset: int, sep: int, final: bool, state: np.ndarray,
          found: np.ndarray) -> tuple[int, int]:
    """Walk ``data[at:]`` (its first byte is byte ``offset + at`` of the file), recording
    each ragged row in ``found`` (row, fields, first byte, end byte, line) until it is full:
    (where to go on, rows recorded). ``final``: the block ends the file. The state is held
    in locals in the loop and written back on return (array slots per byte cost double)."""
    walk, fields, row, line = state[_S_WALK], state[_S_FIELDS], state[_S_ROW], state[_S_LINE]
    began, first_line, width = state[_S_BEGAN], state[_S_FIRST_LINE], state[_S_WIDTH]
    before = state[_S_BEFORE]
    n = 0
    i = at
    end = data.shape[0]
    full = False
    while i < end:
        b = data[i]
        if walk == _QUOTED:
            if b == _QUOTE:
                walk = _CLOSED
            elif b == 10:
                line += 1
        elif b == sep:
            fields += 1
            walk = _START
        elif b == 10:
            if n == found.shape[0]:
                full = True
                break  # this line end is walked by the next call
            stop = offset + i - (1 if before == 13 and offset + i > began else 0)
            if row == 0:
                width = fields + 1
            elif stop > began and fields + 1 != width:
                found[n, 0], found[n, 1], found[n, 2] = row, fields + 1, began
                found[n, 3], found[n, 4] = stop, first_line + 1
                n += 1
            row += 1
            fields = 0
            walk = _START
            line += 1
            began = offset + i + 1
            first_line = line
        elif b == _QUOTE and walk in (_START, _CLOSED):
            walk = _QUOTED
        elif walk == _START:
            walk = _PLAIN
        before = b
        i += 1
    if not full and final and offset + end > began and n < found.shape[0]:
        if row > 0 and fields + 1 != width:  # a last line without its line end
            found[n, 0], found[n, 1], found[n, 2] = row, fields + 1, began
            found[n, 3], found[n, 4] = offset + end, first_line + 1
            n += 1
        elif row == 0:
            width = fields + 1
        row += 1
        began = offset + end
    state[_S_WALK], state[_S_FIELDS], state[_S_ROW], state[_S_LINE] = walk, fields, row, line
    state[_S_BEGAN], state[_S_FIRST_LINE], state[_S_WIDTH] = began, first_line, width
    state[_S_BEFORE] = before
    return i, n


@dataclass(frozen=True)
class Ragged:
    """One data row whose field count is not the header's."""

    row: int  # 1-based data row, as the readers number them
    line: int  # 1-based line of the file where the row begins
    fields: int
    width: int  # the header's
    text: str  # the row as written (bad UTF-8 replaced)

    @property
    def reason(self) -> str:
        """Why the row is quarantined; the same words for every row of one count, so that a
        report's counts by reason stay few (the line's number is in :attr:`raw`)."""
        return (f"a line of {self.fields:,} field{'s' * (self.fields != 1)}; the header has "
                f"{self.width:,} (the line is kept whole, nothing of it stored)")

    @property
    def raw(self) -> str:
        """The line as written, and where it begins in the file (1-based)."""
        return json.dumps({"line": self.line, "text": self.text}, ensure_ascii=False)


def ragged_rows(path: Path, sep: str) -> dict[int, Ragged]:
    """Every data row of a CSV file with another number of fields than its header."""
    state = np.zeros(8, dtype=np.int64)
    found = np.empty((_BATCH, 5), dtype=np.int64)
    spans: list[np.ndarray] = []
    size = path.stat().st_size
    with path.open("rb") as fh:
        offset = 0
        while offset < size:
            data = np.frombuffer(fh.read(BLOCK_BYTES), dtype=np.uint8)
            if not len(data):
                break
            final = offset + len(data) >= size
            at = 0
            while True:
                at, n = _walk(data, at, offset, ord(sep), final, state, found)
                if n:
                    spans.append(found[:n].copy())
                if n < _BATCH:  # (else the walk stopped early, its record full)
                    break
            offset += len(data)
        out: dict[int, Ragged] = {}
        for row, fields, first, stop, line in (r for s in spans for r in s.tolist()):
            text = os.pread(fh.fileno(), stop - first, first).decode("utf-8", errors="replace")
            text = text.removeprefix("\ufeff")
            out[row] = Ragged(row, line, fields, int(state[_S_WIDTH]), text)
    return out
