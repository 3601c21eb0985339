"""CSV lines with another number of fields than the header: found, so none is cut short.

Polars' reader (the general path) either drops a line's extra fields
(``truncate_ragged_lines=True``) or refuses the whole file, and fills a short line's missing
fields with nulls, which no later step can tell from empty fields. So before polars reads a
CSV file, one compiled pass walks its bytes the way RFC 4180 splits them (a separator or a
line end inside a quoted field is text; ``""`` inside one is a quote) and names every data
row whose field count is not the header's; the reader then quarantines those rows whole,
their line kept verbatim. A blank line is not counted as ragged (polars reads it as a row
of nulls, which the check quarantines already). The pass reads the file a block at a time,
carrying its state over, and goes only as far as the rows asked for (:class:`RaggedRows`):
a batch's ragged rows, and their text, are found when that batch is marked, so memory does
not grow with the file, even one whose every row is ragged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
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


def _records(path: Path, sep: int) -> Iterator[tuple[np.ndarray, int]]:
    """The walk of a CSV file, lazily: its ragged rows' records (row, fields, first byte,
    end byte, line), at most :data:`_BATCH` at a time in row order, with the header's
    width."""
    state = np.zeros(8, dtype=np.int64)
    found = np.empty((_BATCH, 5), dtype=np.int64)
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
                at, n = _walk(data, at, offset, sep, final, state, found)
                if n:
                    yield found[:n].copy(), int(state[_S_WIDTH])
                if n < _BATCH:  # (else the walk stopped early, its record full)
                    break
            offset += len(data)


class RaggedRows:
    """The ragged rows of one CSV file, found as a reader asks for them, in row order.

    The walk runs ahead only to the first ragged row (so that :func:`bool` says at once
    whether the file has any, and every batch of such a file can carry the same columns),
    then no further than the rows asked for: it holds at most one block and one kernel
    call's records (:attr:`pending`), and the texts of the rows it hands out."""

    def __init__(self, path: Path, sep: str) -> None:
        self._path = path
        self._walk = _records(path, ord(sep))
        self._held = np.empty((0, 5), dtype=np.int64)
        self._width = 0
        self._any = self._pull()

    def _pull(self) -> bool:
        """Walk on to the next ragged rows; False at the end of the file."""
        walked = next(self._walk, None)
        if walked is None:
            return False
        self._held, self._width = walked
        return True

    def __bool__(self) -> bool:
        """Whether the file has a ragged row at all (handed out yet or not)."""
        return self._any

    @property
    def pending(self) -> int:
        """Ragged rows found but not yet asked for (at most :data:`_BATCH`)."""
        return len(self._held)

    def through(self, last: int) -> list[Ragged]:
        """The ragged rows up to data row ``last`` not handed out yet, with their text."""
        taken: list[np.ndarray] = []
        while len(self._held) or self._pull():
            cut = int(np.searchsorted(self._held[:, 0], last, side="right"))
            taken.append(self._held[:cut])
            self._held = self._held[cut:]
            if len(self._held):
                break
        out: list[Ragged] = []
        if not taken:
            return out
        with self._path.open("rb") as fh:
            for row, fields, first, stop, line in np.concatenate(taken).tolist():
                text = os.pread(fh.fileno(), stop - first, first).decode("utf-8",
                                                                        errors="replace")
                out.append(Ragged(row, line, fields, self._width, text.removeprefix("\ufeff")))
        return out


def ragged_rows(path: Path, sep: str) -> dict[int, Ragged]:
    """Every data row of a CSV file with another number of fields than its header (all at
    once: for a file read whole)."""
    return {g.row: g for g in RaggedRows(path, sep).through(np.iinfo(np.int64).max)}
