"""The clean-CSV front end: one compiled pass from a file's bytes to parsed fields.

Exports from table systems are usually plain: no quoting, ASCII, one row a line, whole
numbers and ISO timestamps. For such a file, reading every field into a string column and
parsing the columns again costs more than the whole check; here each line is split and each
field parsed where it lies in the file, on every core, straight into the arrays that
:func:`roads.ingest.validate.check` takes. Anything outside that subset (a quote, a non-ASCII
byte, a ragged or empty line, a number or a timestamp written another way, a layout change
within the column) returns None, and the file takes the general path (polars' reader and
:func:`roads.ingest.validate.parse_staged`), which gives the same answer; the property tests
hold the two equal. Rows to quarantine or flag are not a reason to leave the fast path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np
import polars as pl
import pyarrow as pa

from roads import replay as k
from roads.errors import InputError
from roads.ingest.readers import ReadOptions, column_targets, separator_in
from roads.ingest.validate import BOOL_CODES, OUTCOME_CODES, Hands, Parsed

# Field roles (a column's job); LABELS are matched against the label table.
ROLES = ("table_id", "shoe_id", "coup", "outcome", "natural", "player_pair", "banker_pair",
         "player_cards", "banker_cards", "player_total", "banker_total", "dealt_at")
R_TABLE, R_SHOE, R_COUP, R_OUTCOME, R_NATURAL, R_PPAIR, R_BPAIR = range(1, 8)
R_PCARDS, R_BCARDS, R_PTOTAL, R_BTOTAL, R_TIME = range(8, 13)
LABEL_ROLES = ("outcome", "natural", "player_pair", "banker_pair")

# Why a file left the fast path (status codes; 0 = parsed).
WHY = {1: "a quoted field", 2: "a non-ASCII byte", 3: "a line with another number of fields",
       4: "an empty line", 5: "a coup number that is not plain digits",
       6: "a total that is not plain digits", 7: "a timestamp in another layout",
       8: "timestamps in more than one layout", 9: "a carriage return inside a line"}
_NO_TIME = np.iinfo(np.int64).min
_TIME_SHAPES_READ = frozenset(  # shapes the general path reads in one layout (TIME_FORMATS)
    {sep | frac | suffix for sep in (0, 1) for frac in (0, 2) for suffix in (0, 4, 8)}
    - {0 | 0 | 4, 0 | 2 | 4})  # "YYYY-MM-DD HH:MM:SSZ" is not among them


@nb.njit(cache=True, inline="always")
def _space(b: int) -> bool:
    return b == 32 or 9 <= b <= 13


@nb.njit(cache=True, inline="always")
def _digits(data: np.ndarray, i: int, end: int) -> int:
    """The non-negative number in ``data[i:end]`` if it is 1-18 plain digits, else -1."""
    if end <= i or end - i > 18:
        return -1
    v = 0
    for j in range(i, end):
        d = data[j] - 48
        if d < 0 or d > 9:
            return -1
        v = v * 10 + d
    return int(v)


@nb.njit(cache=True, inline="always")
def _two(data: np.ndarray, i: int) -> int:
    a = data[i] - 48
    b = data[i + 1] - 48
    if a < 0 or a > 9 or b < 0 or b > 9:
        return -1
    return int(a * 10 + b)


@nb.njit(cache=True, inline="always")
def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_MONTH_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


@nb.njit(cache=True, inline="always")
def _day(data: np.ndarray, i: int) -> int:
    """Days since the epoch of the ``YYYY-MM-DD`` at ``i``; a large negative if invalid."""
    y = _digits(data, i, i + 4)
    mo = _two(data, i + 5)
    d = _two(data, i + 8)
    if y < 1 or mo < 1 or mo > 12 or d < 1:
        return -(2**40)
    leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
    if d > _MONTH_DAYS[mo - 1] + (1 if leap and mo == 2 else 0):
        return -(2**40)
    return _days_from_civil(y, mo, d)


@nb.njit(cache=True)
def _time(data: np.ndarray, i: int, end: int, prev: int, prev_day: int) -> tuple[int, int, int]:
    """(microseconds since the epoch in UTC, shape, day) of
    ``YYYY-MM-DD[T ]HH:MM:SS[.f][Z|±HH:MM]``; shape -1 if the text is not one. Shape bits:
    1 'T', 2 fraction, 4 'Z', 8 offset. The date is read only when it differs from the one
    at ``prev`` (whose day number is ``prev_day``): a shoe's coups mostly share one."""
    if end - i < 19 or data[i + 4] != 45 or data[i + 7] != 45 or data[i + 13] != 58 \
            or data[i + 16] != 58:
        return 0, -1, 0
    shape = 0
    if data[i + 10] == 84:
        shape = 1
    elif data[i + 10] != 32:
        return 0, -1, 0
    same = prev >= 0
    if same:
        for j in range(10):
            if data[i + j] != data[prev + j]:
                same = False
                break
    day = prev_day if same else _day(data, i)
    h = _two(data, i + 11)
    mi = _two(data, i + 14)
    s = _two(data, i + 17)
    if day < -(2**39) or h < 0 or h > 23 or mi < 0 or mi > 59 or s < 0 or s > 59:
        return 0, -1, 0
    j = i + 19
    micros = 0
    if j < end and data[j] == 46:  # fraction: 1-6 digits (more would need rounding rules)
        shape |= 2
        j += 1
        start = j
        while j < end and 48 <= data[j] <= 57:
            j += 1
        width = j - start
        if width < 1 or width > 6:
            return 0, -1, 0
        micros = _digits(data, start, j)
        for _ in range(6 - width):
            micros *= 10
    offset = 0
    if j < end and data[j] == 90:
        shape |= 4
        j += 1
    elif j < end and (data[j] == 43 or data[j] == 45):
        if end - j < 6 or data[j + 3] != 58:
            return 0, -1, 0
        oh = _two(data, j + 1)
        om = _two(data, j + 4)
        if oh < 0 or oh > 23 or om < 0 or om > 59:
            return 0, -1, 0
        offset = (oh * 60 + om) * (1 if data[j] == 43 else -1)
        shape |= 8
        j += 6
    if j != end:
        return 0, -1, 0
    seconds = day * 86400 + h * 3600 + mi * 60 + s - offset * 60
    return seconds * 1_000_000 + micros, shape, day


@nb.njit(cache=True, inline="always")
def _label(data: np.ndarray, i: int, end: int, table: np.ndarray, lengths: np.ndarray,
           codes: np.ndarray, lo: int, hi: int, unknown: int) -> int:
    """The code of the label in ``data[i:end]`` (stripped, any case) among table rows
    ``lo:hi``; -1 when blank, ``unknown`` when not found."""
    if i >= end:
        return -1
    n = end - i
    for e in range(lo, hi):
        if lengths[e] != n:
            continue
        same = True
        for j in range(n):
            b = data[i + j]
            if 65 <= b <= 90:
                b += 32
            if b != table[e, j]:
                same = False
                break
        if same:
            return int(codes[e])
    return unknown


@nb.njit(cache=True, parallel=True)
def _scan(data: np.ndarray, bounds: np.ndarray, counts: np.ndarray) -> None:
    """Move each chunk bound to a line start, then, per chunk in one branch-free pass:
    lines starting there, quotes, whether any byte is >= 128, carriage returns, CR LF pairs."""
    end = data.shape[0]
    for c in range(1, bounds.shape[0] - 1):
        i = max(bounds[c], bounds[c - 1])
        while i < end and data[i - 1] != 10:
            i += 1
        bounds[c] = i
    for c in nb.prange(bounds.shape[0] - 1):
        lines = np.uint32(0)
        quotes = np.uint32(0)
        high = np.uint8(0)
        cr = np.uint32(0)
        lo = bounds[c]
        hi = bounds[c + 1]
        for i in range(lo, hi):
            b = data[i]
            lines += np.uint32(b == 10)
            quotes += np.uint32(b == 34)
            high |= b
            cr += np.uint32(b == 13)
        crlf = 0
        if cr:  # rare: Windows line ends
            for i in range(lo, min(hi, end - 1)):
                crlf += (data[i] == 13) & (data[i + 1] == 10)
        if hi == end and end > lo and data[end - 1] != 10:
            lines += 1  # a last line without its newline
        counts[c, 0] = lines
        counts[c, 1] = quotes
        counts[c, 2] = high >= 128
        counts[c, 3] = cr
        counts[c, 4] = crlf


def read_bytes(path: Path) -> np.ndarray:
    """The whole file as bytes, read in two halves side by side (the copy and the page
    faults of a large file cost as much as parsing a third of it)."""
    size = path.stat().st_size
    data = np.empty(size, dtype=np.uint8)
    bounds = [0, size // 2, size]
    fd = os.open(path, os.O_RDONLY)
    try:
        def read(i: int) -> int:
            view = data.data[bounds[i]:bounds[i + 1]]
            at = bounds[i]
            while len(view):
                got = os.preadv(fd, [view], at)
                if got == 0:
                    break
                view = view[got:]
                at += got
            return at - bounds[i + 1]
        with ThreadPoolExecutor(max_workers=2) as pool:
            short = sum(pool.map(read, range(2)))
    finally:
        os.close(fd)
    if short:
        raise InputError(f"{path}: the file shrank while it was read")
    return data


@nb.njit(cache=True, inline="always")
def _field(data: np.ndarray, pos: int, stop: int, sep: int) -> tuple[int, int]:
    """(end of the field's text, where it stops: at the separator or line end) of the field
    at ``pos``; the CR of a CR LF line end is not text."""
    start = pos
    while pos < stop and data[pos] != sep and data[pos] != 10:
        pos += 1
    end = pos
    if end > start and data[end - 1] == 13 and (pos >= stop or data[pos] == 10):
        end -= 1
    return end, pos


@nb.njit(cache=True, inline="always")
def _stripped(data: np.ndarray, a: int, e: int) -> tuple[int, int]:
    """``data[a:e]`` without surrounding white space (as polars' ``str.strip_chars``)."""
    while a < e and _space(data[a]):
        a += 1
    while e > a and _space(data[e - 1]):
        e -= 1
    return a, e


@nb.njit(cache=True)
def _id_fields(data: np.ndarray, pos: int, stop: int, sep: int, roles: np.ndarray,
               out: np.ndarray) -> None:
    """The stripped table and shoe fields of the line at ``pos`` (see :func:`_parse`)."""
    out[0] = -1
    out[2] = -1
    for field in range(roles.shape[0]):
        fs = pos
        fe, pos = _field(data, pos, stop, sep)
        role = roles[field]
        if (role in (R_TABLE, R_SHOE)) and fe > fs:
            col = 0 if role == R_TABLE else 2
            out[col], out[col + 1] = _stripped(data, fs, fe)
        if pos >= stop or data[pos] == 10:
            break
        pos += 1


@nb.njit(cache=True, inline="always")
def _same_ids(data: np.ndarray, keys: np.ndarray, x: int, y: int) -> bool:
    """Whether rows ``x`` and ``y`` of ``keys`` (id field bounds) hold the same ids."""
    for col in (0, 2):
        a0 = keys[x, col]
        b0 = keys[y, col]
        if (a0 < 0) != (b0 < 0):
            return False
        if a0 >= 0:
            n = keys[x, col + 1] - a0
            if n != keys[y, col + 1] - b0:
                return False
            for j in range(n):
                if data[a0 + j] != data[b0 + j]:
                    return False
    return True


@nb.njit(cache=True, parallel=True)
def _parse(data: np.ndarray, bounds: np.ndarray, first_row: np.ndarray, sep: int,
           roles: np.ndarray, table: np.ndarray, lengths: np.ndarray, codes: np.ndarray,
           label_lo: np.ndarray, label_hi: np.ndarray,
           starts: np.ndarray, run_ids: np.ndarray, coup: np.ndarray, labels: np.ndarray,
           totals: np.ndarray, time_us: np.ndarray,
           p_cards: np.ndarray, p_values: np.ndarray, p_count: np.ndarray, p_kind: np.ndarray,
           b_cards: np.ndarray, b_values: np.ndarray, b_count: np.ndarray, b_kind: np.ndarray,
           status: np.ndarray, shapes: np.ndarray) -> None:
    """Parse every line of every chunk into row arrays, in one pass.

    Only what the checks need is written (memory traffic, not arithmetic, is the cost
    here): ``starts[r]`` whether row ``r`` begins a new (table, shoe) run, and for those rows
    only the id fields' bounds in ``run_ids``; the fields of roles absent from the file are
    filled by the caller. ``labels[slot]`` rows: outcome, natural, player/banker pair.
    ``status[c]``: 0, or why chunk ``c`` needs the general path (see WHY); ``shapes[c]``:
    its timestamp shape (-1 none seen). Quotes, non-ASCII bytes and stray carriage returns
    are ruled out by the caller before this runs.
    """
    n_fields = roles.shape[0]
    for c in nb.prange(bounds.shape[0] - 1):
        status[c] = 0
        shapes[c] = -1
        r = first_row[c]
        pos = bounds[c]
        stop = bounds[c + 1]
        # The id bounds of this line and the one before, in alternating rows (no array
        # references are swapped in the loop: each swap would count references).
        keys = np.full((2, 4), -1, dtype=np.int64)
        cur = 0
        if pos < stop and c > 0:  # the line before this chunk, to tell whether a run goes on
            back = pos - 1
            while back > bounds[0] and data[back - 1] != 10:
                back -= 1
            _id_fields(data, back, pos, sep, roles, keys[1])
        st = 0
        shape_seen = -1
        prev_time = -1  # where the last timestamp began, and its day
        prev_day = 0
        while pos < stop and st == 0:
            if data[pos] == 10 or (data[pos] == 13 and pos + 1 < stop and data[pos + 1] == 10):
                st = 4
                break
            keys[cur, 0] = -1
            keys[cur, 2] = -1
            field = 0
            while True:
                fs = pos
                fe, pos = _field(data, pos, stop, sep)
                if field >= n_fields:
                    st = 3
                    break
                role = roles[field]
                if role != 0 and role != R_PCARDS and role != R_BCARDS:
                    # stripped bounds; an empty field is missing (polars reads it as null)
                    a, e = _stripped(data, fs, fe)
                    if role in (R_TABLE, R_SHOE):
                        if fe > fs:
                            col = 0 if role == R_TABLE else 2
                            keys[cur, col] = a
                            keys[cur, col + 1] = e
                    elif role == R_COUP:
                        v = _digits(data, a, e)
                        if v < 0 or v > 2_147_483_647:
                            st = 5
                        coup[r] = v
                    elif role <= R_BPAIR:
                        slot = role - R_OUTCOME
                        labels[slot, r] = _label(data, a, e, table, lengths, codes,
                                                 label_lo[slot], label_hi[slot],
                                                 -2 if slot == 0 else -1)
                    elif role in (R_PTOTAL, R_BTOTAL):
                        v = -1
                        if e > a:
                            v = _digits(data, a, e)
                            if v < 0:
                                st = 6
                        totals[role - R_PTOTAL, r] = min(v, 99)
                    else:  # R_TIME
                        t = _NO_TIME
                        if e > a:
                            t, shape, day = _time(data, a, e, prev_time, prev_day)
                            if shape < 0:
                                st = 7
                            else:
                                prev_time = a
                                prev_day = day
                                if shape_seen < 0:
                                    shape_seen = shape
                                elif shape_seen != shape:
                                    st = 8
                        time_us[r] = t
                elif role == R_PCARDS:
                    if fe > fs:
                        p_count[r], p_kind[r] = k.hand(data, fs, fe, p_cards, p_values, r)
                    else:
                        p_count[r], p_kind[r] = k.hand(data, 0, 0, p_cards, p_values, r)
                elif role == R_BCARDS:
                    if fe > fs:
                        b_count[r], b_kind[r] = k.hand(data, fs, fe, b_cards, b_values, r)
                    else:
                        b_count[r], b_kind[r] = k.hand(data, 0, 0, b_cards, b_values, r)
                field += 1
                if pos >= stop or data[pos] == 10:
                    break
                pos += 1  # the separator
            if field != n_fields and st == 0:
                st = 3
            new_run = r == 0 or not _same_ids(data, keys, cur, 1 - cur)
            starts[r] = new_run
            if new_run:
                for j in range(4):
                    run_ids[r, j] = keys[cur, j]
            cur = 1 - cur
            pos += 1  # the newline
            r += 1
        status[c] = st
        shapes[c] = shape_seen


@dataclass(frozen=True)
class _Labels:
    table: np.ndarray
    lengths: np.ndarray
    codes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def _label_table() -> _Labels:
    """The ASCII labels of the outcome and boolean columns, lower case, one row each
    (non-ASCII labels never reach this path: such a file takes the general one)."""
    entries = [(slot, label, code) for slot, mapping in enumerate(
        [OUTCOME_CODES, BOOL_CODES, BOOL_CODES, BOOL_CODES]) for label, code in mapping.items()
        if label and label.isascii()]
    width = max(len(label) for _, label, _ in entries)
    table = np.zeros((len(entries), width), dtype=np.uint8)
    for row, (_, label, _) in enumerate(entries):
        table[row, :len(label)] = np.frombuffer(label.encode(), dtype=np.uint8)
    slots = np.array([slot for slot, _, _ in entries])
    return _Labels(table, np.array([len(label) for _, label, _ in entries], dtype=np.int64),
                   np.array([code for _, _, code in entries], dtype=np.int16),
                   np.searchsorted(slots, np.arange(4), "left").astype(np.int64),
                   np.searchsorted(slots, np.arange(4), "right").astype(np.int64))


_LABELS = _label_table()


@dataclass(frozen=True)
class Attempt:
    """The fast path's answer: parsed rows, or why the file needs the general path."""

    parsed: Parsed | None
    why: str | None = None


@dataclass(frozen=True)
class Layout:
    """What the header says: the separator, each column's role, the fields present, and
    where the first data row starts."""

    sep: str
    roles: np.ndarray
    present: frozenset[str]
    body: int


@dataclass(frozen=True)
class Body:
    """One stretch of whole data lines parsed: the rows (None when the stretch breaks the
    plain subset) and what the whole-file answer needs (see :func:`why_not`)."""

    parsed: Parsed | None
    lines: int
    scan: tuple[bool, bool, bool]  # a quote, a non-ASCII byte, a stray carriage return
    status: int  # the first line's reason (WHY) to leave, 0 if none
    shapes: frozenset[int]  # timestamp shapes seen


def _header(data: np.ndarray, sep: str) -> tuple[list[str], int] | None:
    """The header's column names and where the body starts; None if the header is quoted or
    has blank or repeated names (the general reader decides what those mean)."""
    newline = np.flatnonzero(data[: 1 << 16] == 10)
    if not len(newline) and len(data) > 1 << 16:
        return None  # no line end in the first 64 KiB: not an export header
    end = int(newline[0]) if len(newline) else len(data)
    text = bytes(data[:end]).decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r")
    names = text.split(sep)
    if '"' in text or any(not n.strip() for n in names) or len(set(names)) != len(names):
        return None
    return names, min(end + 1, len(data))


@contextmanager
def _chunk_by_chunk() -> Iterator[None]:
    """Parallel loops inside hand out their chunks one at a time. There are many more chunks
    than cores, so a core that is also hashing the file (or serving another process) takes
    fewer of them instead of holding up the rest."""
    previous = nb.set_parallel_chunksize(1)
    try:
        yield
    finally:
        nb.set_parallel_chunksize(previous)


def parse_csv(path: Path, options: ReadOptions, data: np.ndarray | None = None) -> Attempt:
    """Parse a clean card-level CSV file straight from its bytes (``data``, if the caller
    has read them already: :func:`read_bytes`; see the module doc)."""
    data = read_bytes(path) if data is None else data
    layout = layout_of(path, options, data)
    if isinstance(layout, Attempt):
        return layout
    body = parse_body(path, options, layout, data, layout.body, 0)
    why = why_not([body])
    return Attempt(body.parsed if why is None else None, why)


def layout_of(path: Path, options: ReadOptions, head: np.ndarray) -> Layout | Attempt:
    """The layout from the file's first bytes (at least its header line), or why the file
    needs the general path."""
    sep = separator_in(head[:8192].tobytes())
    header = _header(head, sep)
    if header is None:
        return Attempt(None, "a quoted, blank or repeated column name")
    names, body = header
    targets = column_targets(path, names, options)
    if "coup" not in targets.values():
        return Attempt(None, "no coup column (rows are numbered by the general path)")
    roles = np.zeros(len(names), dtype=np.int64)
    for column, target in targets.items():
        roles[names.index(column)] = ROLES.index(target) + 1
    return Layout(sep, roles, frozenset(targets.values()), body)


def why_not(bodies: list[Body]) -> str | None:
    """Why the file these stretches make up needs the general path (None: it does not), the
    same answer for the file whole or in stretches: a quote anywhere, then a non-ASCII byte,
    then a stray carriage return, then the first line that breaks the subset, then the
    timestamp layouts."""
    for flag in range(3):
        if any(b.scan[flag] for b in bodies):
            return WHY[(1, 2, 9)[flag]]
    status = next((b.status for b in bodies if b.status), 0)
    if status:
        return WHY[status]
    seen = frozenset().union(*(b.shapes for b in bodies))
    if len(seen) > 1:
        return WHY[8]
    if seen - _TIME_SHAPES_READ:
        return WHY[7]
    return None


def parse_body(path: Path, options: ReadOptions, layout: Layout, data: np.ndarray,
               start: int, first_row: int) -> Body:
    """Parse the whole lines of ``data[start:]`` (rows numbered from ``first_row + 1``); no
    rows when the stretch itself breaks the plain subset."""
    chunks = max(1, min(16 * nb.get_num_threads(), (len(data) - start) // (1 << 20) + 1))
    bounds = np.linspace(start, len(data), chunks + 1).astype(np.int64)
    counts = np.zeros((chunks, 5), dtype=np.int64)
    with _chunk_by_chunk():
        _scan(data, bounds, counts)
    quotes, high, cr, crlf = counts[:, 1:].sum(axis=0)
    lines = counts[:, 0]
    n = int(lines.sum())
    scan = (bool(quotes), bool(high), bool(cr != crlf))  # (a header's BOM is not scanned)
    if any(scan):
        return Body(None, n, scan, 0, frozenset())
    first_row_of = np.concatenate(([0], np.cumsum(lines)[:-1])).astype(np.int64)
    present = layout.present

    def output(roles: tuple[str, ...], shape: tuple[int, ...], dtype: type,
               empty: int) -> np.ndarray:
        """An output the kernel fills; the rows of roles no column has hold ``empty``."""
        out: np.ndarray = np.empty((len(roles), *shape), dtype=dtype)
        for i, role in enumerate(roles):
            if role not in present:
                out[i] = empty
        return out

    starts = np.empty(n, dtype=np.bool_)
    run_ids = np.empty((n, 4), dtype=np.int64)
    coup = np.empty(n, dtype=np.int32)
    labels = output(LABEL_ROLES, (n,), np.int16, -1)
    totals = output(("player_total", "banker_total"), (n,), np.int16, -1)
    time_us = output(("dealt_at",), (n,), np.int64, _NO_TIME)[0]
    p, b = (Hands(output((s,), (n, 3), np.uint8, k.NONE)[0],
                  output((s,), (n, 3), np.int8, -1)[0], output((s,), (n,), np.int16, 0)[0],
                  output((s,), (n,), np.int8, k.KIND_NONE)[0])
            for s in ("player_cards", "banker_cards"))
    status = np.empty(chunks, dtype=np.int64)
    shapes = np.empty(chunks, dtype=np.int64)
    lab = _LABELS
    with _chunk_by_chunk():
        _parse(data, bounds, first_row_of, ord(layout.sep), layout.roles, lab.table,
               lab.lengths, lab.codes, lab.lo, lab.hi, starts, run_ids, coup, labels, totals,
               time_us, p.cards, p.values, p.count, p.kind, b.cards, b.values, b.count, b.kind,
               status, shapes)
    first_status = int(status[status != 0][0]) if status.any() else 0
    seen = frozenset(shapes[shapes >= 0].tolist())
    if first_status or len(seen) > 1 or seen - _TIME_SHAPES_READ:
        return Body(None, n, scan, first_status, seen)
    table_ids, shoe_ids, one_run = _id_columns(data, run_ids, starts, present, options)
    dealt_at = pl.Series("dealt_at", time_us).cast(pl.Datetime("us", "UTC"))
    missing_time = time_us == _NO_TIME
    if missing_time.any():
        dealt_at = dealt_at.set(pl.Series(missing_time), None)
    rows = pl.DataFrame([
        pl.Series("_row", np.arange(first_row + 1, first_row + n + 1, dtype=np.int64)),
        table_ids, shoe_ids,
    ]).select(pl.lit(str(path)).alias("_file"), "_row", pl.lit(None, dtype=pl.String).alias("_raw"),
              "table_id", "shoe_id")
    recorded = {"player_total": totals[0], "banker_total": totals[1],
                **{name: labels[i] for i, name in enumerate(LABEL_ROLES)}}
    parsed = Parsed(rows, p, b, recorded, pl.Series("coup", coup),
                    np.zeros(n, dtype=np.bool_), dealt_at, starts if one_run else None)
    return Body(parsed, n, scan, 0, seen)


@nb.njit(cache=True)
def _run_bytes(data: np.ndarray, run_ids: np.ndarray, first: np.ndarray, col: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The id field ``col`` (0 table, 2 shoe) of each run's first row: string offsets, bytes,
    and which are missing."""
    offsets = np.zeros(first.shape[0] + 1, dtype=np.int64)
    missing = np.zeros(first.shape[0], dtype=np.bool_)
    for i in range(first.shape[0]):
        a, e = run_ids[first[i], col], run_ids[first[i], col + 1]
        missing[i] = a < 0
        offsets[i + 1] = offsets[i] + (e - a if a >= 0 else 0)
    out = np.empty(offsets[-1], dtype=np.uint8)
    for i in range(first.shape[0]):
        a = run_ids[first[i], col]
        if a >= 0:
            out[offsets[i]:offsets[i + 1]] = data[a:run_ids[first[i], col + 1]]
    return offsets, out, missing


def _id_columns(data: np.ndarray, run_ids: np.ndarray, starts: np.ndarray,
                present: frozenset[str], options: ReadOptions) -> tuple[pl.Series, pl.Series, bool]:
    """The table and shoe columns, built once per run of rows and repeated; and whether
    each (table, shoe) is one run. A blank field takes the --table/--shoe default."""
    first = np.flatnonzero(starts)
    run_of_row = np.cumsum(starts) - 1
    columns = []
    for col, name, default in ((0, "table_id", options.table_id),
                               (2, "shoe_id", options.shoe_id)):
        fallback = default.strip() if default is not None else None
        if name not in present:
            run = pl.Series(name, [fallback] * len(first), dtype=pl.String)
        else:
            offsets, text, missing = _run_bytes(data, run_ids, first, col)
            run = pl.Series(name, pa.LargeStringArray.from_buffers(
                len(first), pa.py_buffer(offsets), pa.py_buffer(text)))
            if missing.any():
                run = run.set(pl.Series(missing), fallback)
        columns.append(run)
    keys = pl.DataFrame(columns)
    one_run = keys.n_unique() == keys.height
    rows = keys.select(pl.all().gather(run_of_row))  # both columns at once
    return rows["table_id"], rows["shoe_id"], one_run
