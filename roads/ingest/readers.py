"""One reader per input format; each turns a file into the same *staging* frame.

Staging columns: ``_file`` and ``_row`` (1-based data row, or line for line formats) say
where a row came from; ``_raw`` keeps the row verbatim (JSON) where the reader has it
cheaply (CSV rows are encoded only when quarantined, see :func:`raw_rows`); a CSV file with
lines of another number of fields than its header also has ``_ragged``, why such a row is
quarantined whole (null on the other rows; :mod:`roads.ingest.ragged`); every coup field
is a raw string (card columns hold the hand as written, e.g. ``"9h 4s"`` or ``"9,4"``).
Nothing is interpreted here: :mod:`roads.ingest.validate` decides.

Every polars read here passes ``glob=False``: a file's name is a name, never a pattern
(``shoe[1].csv`` was refused, ``shoe?.csv`` read whichever file matched).
"""

from __future__ import annotations

import codecs
import difflib
import json
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import polars as pl

from roads.cards import CardError, parse_card
from roads.errors import InputError
from roads.ingest import jsonl
from roads.ingest.header import (
    HEADER_SYNONYMS,
    blank_columns,
    check_repeats,
    header_cells,
    normalise_header,
)
from roads.ingest.labels import FIELDS as FIELDS
from roads.ingest.labels import OUTCOME_LABELS
from roads.ingest.parquet_columns import staged_columns
from roads.ingest.ragged import RAGGED, RaggedRows

CARD_FIELDS = ("player_cards", "banker_cards")
FORMATS = ("auto", "csv", "shoe-lines", "jsonl", "parquet")


@dataclass(frozen=True)
class ReadOptions:
    """What the user told us about the input."""

    format: str = "auto"
    table_id: str | None = None
    shoe_id: str | None = None
    mapping: dict[str, str] = field(default_factory=dict)  # field -> input column


def detect_format(path: Path) -> str:
    """Guess the format from the extension, then from the first lines."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    with path.open("rb") as fh:
        head = fh.read(4096).decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
    if not lines:
        return "shoe-lines"
    if lines[0].startswith("{"):
        return "jsonl"
    sample = lines[:20]
    no_separators = not any(sep in ln for ln in sample for sep in ",;\t|")
    if no_separators and _one_outcome_column(sample):
        return "csv"
    if no_separators and sum(map(_looks_like_shoe, sample)) * 2 >= len(sample):
        return "shoe-lines"
    return "csv"


def _looks_like_shoe(line: str) -> bool:
    return all(ch.lower() in OUTCOME_LABELS or ch.isspace() for ch in line)


def _one_outcome_column(lines: list[str]) -> bool:
    """Whether the lines are a one-column CSV of outcomes: an outcome header (``Result``,
    ``结果``), then rows that are mostly one outcome each (``B``, ``Banker``, ``庄``), not
    shoes of many (``BBPPT``). No outcome header is a shoe line."""
    if HEADER_SYNONYMS.get(normalise_header(lines[0])) != "outcome":
        return False
    rows = lines[1:]
    return sum(ln.casefold() in OUTCOME_LABELS for ln in rows) * 2 >= len(rows)


def read(path: Path, options: ReadOptions) -> pl.DataFrame:
    """The staging frame of one file, in any supported format."""
    fmt = _format(path, options)
    reader = {"csv": read_csv, "shoe-lines": read_shoe_lines, "jsonl": read_jsonl,
              "parquet": read_parquet}[fmt]
    frame = reader(path, options)
    return _complete(frame, path, options)


def _format(path: Path, options: ReadOptions) -> str:
    if not path.exists():
        raise InputError(f"{path}: no such file")
    fmt = options.format if options.format != "auto" else detect_format(path)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def _batched(rows: Iterator[tuple[object, ...]], size: int
             ) -> Iterator[list[tuple[object, ...]]]:
    while batch := list(islice(rows, size)):
        yield batch


def staged_batches(path: Path, options: ReadOptions, rows: int) -> Iterator[pl.DataFrame]:
    """:func:`read` in batches of about ``rows`` rows, in file order, with the same row
    numbers, so that a file of any size is read in bounded memory. Parquet comes whole (the
    engine's output and exports, written by this product in shoe order)."""
    fmt = _format(path, options)
    if fmt == "csv":
        batches: Iterable[pl.DataFrame] = _csv_batches(path, options, rows)
    elif fmt == "jsonl":
        batches = (pl.DataFrame(b, schema=jsonl.SCHEMA, orient="row")
                   for b in _batched(jsonl.rows(path), rows))
    elif fmt == "shoe-lines":
        batches = (pl.DataFrame(b, schema=_SHOE_LINE_SCHEMA, orient="row")
                   for b in _batched(_shoe_line_rows(path, options), rows))
    else:
        batches = [read_parquet(path, options)]
    for batch in batches:
        yield _complete(batch, path, options)


def _complete(frame: pl.DataFrame, path: Path, options: ReadOptions) -> pl.DataFrame:
    """Add missing fields as nulls, apply --table/--shoe defaults, fix the column order."""
    columns = []
    for name in FIELDS:
        if name in frame.columns:
            columns.append(pl.col(name).cast(pl.String))
        else:
            columns.append(pl.lit(None, dtype=pl.String).alias(name))
    extra = [RAGGED] if RAGGED in frame.columns else []
    out = frame.select(pl.lit(str(path)).alias("_file"), pl.col("_row").cast(pl.Int64),
                       pl.col("_raw").cast(pl.String), *extra, *columns)
    for name, default in (("table_id", options.table_id), ("shoe_id", options.shoe_id)):
        if default is not None:
            out = out.with_columns(pl.col(name).fill_null(default))
    return out


def separator(path: Path) -> str:
    """The field separator: whichever of tab, semicolon and comma the header uses most."""
    with path.open("rb") as fh:
        return separator_in(fh.read(8192))


#: The most columns a CSV header may name, and the longest header line. Card-level exports
#: have a few dozen; reading a million-column header took polars about a minute and the
#: hints for its unread columns hours (a 9 MB file held a batch job).
MAX_COLUMNS = 1_000
MAX_HEADER_BYTES = 1 << 20


def check_header(path: Path) -> None:
    """Refuse, before anything reads it, a CSV whose header names more than
    :data:`MAX_COLUMNS` columns or runs past :data:`MAX_HEADER_BYTES` without a line end."""
    with path.open("rb") as fh:
        head = fh.read(MAX_HEADER_BYTES + 1)
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\0" in head[:head.find(b"\n")]:
        raise InputError(f"{path}: it is UTF-16 or binary (NUL bytes in its first line), not "
                         "UTF-8 text; save it as UTF-8 CSV")
    if b"\n" not in head and head.count(b"\r") >= 2:
        raise InputError(f"{path}: its lines end in CR alone; save it with LF or CRLF line "
                         "ends")
    ends = [i for i in (head.find(b"\n"), head.find(b"\r")) if i >= 0]
    if not ends and len(head) > MAX_HEADER_BYTES:
        raise InputError(f"{path}: its header line is longer than {MAX_HEADER_BYTES:,} bytes; "
                         "is it a CSV file?")
    line = head[:min(ends)] if ends else head
    width = line.count(separator_in(line[:8192] or b",").encode()) + 1
    if width > MAX_COLUMNS:
        raise InputError(f"{path}: its header names {width:,} columns; at most "
                         f"{MAX_COLUMNS:,} are read")


def separator_in(head: bytes) -> str:
    """:func:`separator` from the file's first 8 KiB, already read."""
    text = head[:8192].decode("utf-8", errors="replace")
    first = text.splitlines()[0] if text else ""
    return max(("\t", ";", ","), key=first.count) if first else ","


def column_targets(path: Path, columns: list[str], options: ReadOptions) -> dict[str, str]:
    """Input column -> canonical field, in file order: a column ``--map`` names is its
    field's column; the fields it leaves are read from the first column whose header is one
    of theirs (a second header of a field already read is left, and named in the report's
    suggestions). A ``--map`` column the file lacks is an error naming it and the file, and
    so is a header that names one column twice (:func:`roads.ingest.header.check_repeats`);
    a column with a blank header is read for no field."""
    cells = header_cells(path, separator(path))
    check_repeats(path, cells)
    blank = blank_columns(cells, columns)
    missing = [c for c in options.mapping.values() if c not in columns or c in blank]
    if missing:
        raise InputError(f"{path}: --map names column(s) not in the file: "
                         f"{', '.join(map(repr, missing))} (its columns: "
                         f"{', '.join(blank.get(c, c) for c in columns)})")
    mapped = {column: target for target, column in options.mapping.items()}
    taken = set(mapped.values())
    rename: dict[str, str] = {}
    for column in columns:
        target = mapped.get(column)
        if target is None:
            target = None if column in blank else HEADER_SYNONYMS.get(normalise_header(column))
            if target is None or target in taken:
                continue
            taken.add(target)
        rename[column] = target
    if "outcome" not in rename.values() and not any(c in rename.values() for c in CARD_FIELDS):
        hints = [h for c in columns if c not in rename and c not in blank
                 and (h := _suggestion(c, set(rename.values()))) is not None]
        raise InputError(f"{path}: no outcome or card columns found (columns: "
                         f"{', '.join(blank.get(c, c) for c in columns)}); name them with --map"
                         + (f" ({'; '.join(hints)})" if hints else ""))
    return rename


@dataclass(frozen=True)
class Columns:
    """How one file's columns were read: the column each field comes from, the columns
    nothing was taken from, and what the reader thinks was meant (so that a column with an
    unfamiliar header is never dropped without a word)."""

    used: dict[str, str] = field(default_factory=dict)  # field -> input column
    ignored: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def report(self) -> dict[str, Any]:
        return {"columns": self.used, "ignored_columns": list(self.ignored),
                "suggestions": list(self.suggestions), "warnings": list(self.warnings)}


#: Rows of a CSV file sampled to tell what its unused columns hold.
SAMPLE_ROWS = 200
_HAND_SEPARATORS = re.compile(r"[\s,;/|]+")
_RANK_ONLY = re.compile(r"^(10|[2-9]|[atjqk])$", re.IGNORECASE)


def columns_of(path: Path, fmt: str, options: ReadOptions) -> Columns:
    """What :func:`read` takes from each column of a CSV or Parquet file, and what it leaves
    (line formats and journal events have no columns to leave)."""
    if fmt == "parquet":
        try:
            names = pl.scan_parquet(path, glob=False).collect_schema().names()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"{path}: cannot be read as Parquet: {exc}") from None
        return Columns({n: n for n in FIELDS if n in names},
                       tuple(n for n in names if n not in FIELDS))
    if fmt != "csv":
        return Columns()
    sample = _read_text_csv(path, SAMPLE_ROWS)
    rename = column_targets(path, sample.columns, options)
    blank = blank_columns(header_cells(path, separator(path)), sample.columns)
    used = {target: column for column, target in rename.items()}
    unread = [c for c in sample.columns if c not in rename]
    ignored = tuple(blank.get(c, c) for c in unread)
    named = [c for c in unread if c not in blank]  # (a --map cannot name a blank column)
    hints = {c: s for c in named if (s := _suggestion(c, set(used), used)) is not None}
    hands = [c for c in named if HEADER_SYNONYMS.get(normalise_header(c)) not in used
             and _holds_hands(sample[c])]
    unmatched = [f for f in CARD_FIELDS if f not in used]
    warnings = []
    if hands and unmatched:
        guesses = _sides(hands, unmatched)
        stored = ("outcome-only (no cards, no pair information)" if len(unmatched) == 2
                  else f"with no {unmatched[0]}: rows with cards for one side are quarantined")
        warnings.append(f"column(s) {', '.join(repr(c) for c in hands)} hold hands of cards "
                        f"but no {' or '.join(unmatched)} column was recognised, so the "
                        f"coups are stored {stored}; name them with "
                        f"{' '.join(_map_option(f, c) for f, c in guesses)} (and --replace "
                        "if the file was ingested already)")
        for target, column in guesses:  # a hand's likely side beats a header's likeness
            hints[column] = f"did you mean {target}? use {_map_option(target, column)}"
    return Columns(used, ignored, tuple(hints.values()), tuple(warnings))


def _suggestion(column: str, matched: set[str], used: dict[str, str] | None = None
                ) -> str | None:
    """A hint for a column no field was taken from: a second spelling of a field already
    read, or the field its header is closest to (``difflib``, over every known spelling)."""
    name = normalise_header(column)
    known = HEADER_SYNONYMS.get(name)
    if known is not None and known in matched:
        source = f" from {used[known]!r}" if used and known in used else ""
        return (f"{column!r} also names {known}, which is read{source}; use "
                f"{_map_option(known, column)} to read it instead")
    close = difflib.get_close_matches(name, list(HEADER_SYNONYMS), n=1, cutoff=0.75)
    if not close or HEADER_SYNONYMS[close[0]] in matched:
        return None
    target = HEADER_SYNONYMS[close[0]]
    return f"did you mean {target}? use {_map_option(target, column)}"


#: Words of a header that name a side (compared after :func:`normalise_header`).
_SIDE_WORDS = {
    "player_cards": ("p", "player", "punto", "闲", "閒", "игрок", "игрока", "παικτης",
                     "παικτη"),
    "banker_cards": ("b", "banker", "banco", "bank", "dealer", "庄", "莊", "банкир", "банкира",
                     "банк", "банка", "μπανκα", "μπανκας", "τραπεζιτης", "τραπεζιτη"),
}


def _sides(hands: list[str], unmatched: list[str]) -> list[tuple[str, str]]:
    """(card field, column) guesses for columns that hold hands: by a word of the header
    naming the side (``Cards P``, ``庄家``), the rest in file order (Player first, as exports
    write them)."""
    def side(column: str) -> str | None:
        words = {normalise_header(w) for w in re.split(r"[\W\d_]+|(?<=[a-z])(?=[A-Z])",
                                                      column) if w}
        words |= {ch for ch in column if ch in "闲閒庄莊"}
        found = [f for f, names in _SIDE_WORDS.items() if words & set(names)]
        return found[0] if len(found) == 1 else None

    guesses: dict[str, str] = {}
    for column in hands:
        target = side(column)
        if target in unmatched and target not in guesses:
            guesses[target] = column
    rest = [c for c in hands if c not in guesses.values()]
    for target in unmatched:
        if target not in guesses and rest:
            guesses[target] = rest.pop(0)
    return [(t, guesses[t]) for t in unmatched if t in guesses]


def _map_option(target: str, column: str) -> str:
    """The ``--map`` option naming ``column``, quoted for a shell where it needs it."""
    return f"--map {shlex.quote(f'{target}={column}')}"


def _holds_hands(values: pl.Series) -> bool:
    """Whether most sampled values of a column read as one side's hand: two or three cards
    (``9h Kd``, ``10H,Qc``, ``K♠ 2♥``) or card values (``9,4,6``). Values alone count only
    when some hand has a third card, which a pair of totals (``9 8``) never has."""
    texts = [v for v in values.drop_nulls().str.strip_chars().to_list() if v]
    hands = [h for h in map(_hand_shape, texts) if h is not None]
    if not hands or len(hands) < max(0.8 * len(texts), min(3, len(texts))):
        return False
    return any(suited for suited, _ in hands) or any(n == 3 for _, n in hands)


def _hand_shape(text: str) -> tuple[bool, int] | None:
    """(every token a suited card, how many) for two or three card tokens, else None."""
    tokens = [t for t in _HAND_SEPARATORS.split(text) if t]
    if len(tokens) not in (2, 3):
        return None
    suited = True
    for token in tokens:
        if _RANK_ONLY.match(token):
            suited = False
            continue
        try:
            parse_card(token)
        except CardError:
            return None
    return suited, len(tokens)


_POLARS_ADVICE = re.compile(r"\s*(The current offset in the file is (\d+) bytes\.)|"
                            r"You might want to try:.*?(?=Original error)", re.DOTALL)


def quote_problem(path: Path) -> tuple[int, str] | None:
    """The first line at which the file breaks CSV's quoting, and how, or None.

    Polars names a byte offset of the chunk it was parsing, often far from the fault; this
    walks the file once the way RFC 4180 reads it (a quote opens a field only at its start;
    ``""`` inside one is a quote) and names the line a person can open. Well-formed lines
    are passed by one byte search or one regular-expression match, and a quoted field is
    crossed by one match of its text (``""`` pairs included, which a quote-by-quote walk
    took a Python step each for), so even a file-long open quote is read at regex speed. A
    UTF-8 byte-order mark before the first field is no part of it (the readers skip it)."""
    sep = separator(path).encode()
    field = b'(?:"[^"]*(?:""[^"]*)*"|[^"%s\r\n]*)' % re.escape(sep)  # one step per "" pair
    whole = re.compile(b"%s(?:%s%s)*\r?\n?" % (field, re.escape(sep), field))
    unquoted = re.compile(b'[^"%s\r\n]*' % re.escape(sep))
    inside = re.compile(b'[^"]*(?:""[^"]*)*')  # a quoted field's text, to its closing quote
    opened = 0  # the line a still-open quoted field began on
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if number == 1 and line.startswith(codecs.BOM_UTF8):
                line = line[len(codecs.BOM_UTF8):]
            if not opened and (b'"' not in line or whole.fullmatch(line)):
                continue
            if opened and inside.match(line).end() == len(line):  # type: ignore[union-attr]
                continue  # the field goes on over this whole line
            began, quoted, pos = opened, bool(opened), 0
            while True:
                if quoted:  # cross the quoted field to its closing quote
                    close = inside.match(line, pos).end()  # type: ignore[union-attr]
                    if close == len(line):
                        break  # the field goes on, over the line end
                    quoted, pos = False, close + 1
                    after = line[pos:pos + 1]
                    if after != sep and after not in (b"", b"\r", b"\n"):
                        return number, "text follows a closing quote in the same field"
                    if after != sep:
                        break
                    pos += 1
                if line[pos:pos + 1] == b'"':
                    quoted, began, pos = True, number, pos + 1
                    continue
                pos = unquoted.match(line, pos).end()  # type: ignore[union-attr]
                after = line[pos:pos + 1]
                if after == b'"':
                    return number, "a quote inside a field that does not start with one"
                if after != sep:
                    break
                pos += 1
            opened = began if quoted else 0
    return (opened, "a quoted field opens on this line and is never closed") if opened else None


_QUOTED_VALUE = re.compile(r'could not parse `[^`]*"')


def not_csv(path: Path, exc: Exception) -> str:
    """One line for a file polars could not read as CSV: the line where its quoting breaks
    (:func:`quote_problem`) or else polars' byte offset, and what polars found, without its
    advice on its own parameters (``ignore_errors``, ``infer_schema_length``: nothing a
    `roads` user can set), control characters escaped."""
    text = str(exc)
    problem = quote_problem(path)
    # polars' complaint is about quoting when the value it could not take holds a quote
    about_quotes = "escaped" in text or _QUOTED_VALUE.search(text) is not None
    if problem is not None and about_quotes:
        line, why = problem
        return f"{path} line {line:,}: cannot be read as CSV: {why} (nothing was stored; " \
            "quote the whole field, doubling quotes inside it, or remove the quote)"
    offset = re.search(r"The current offset in the file is (\d+) bytes", text)
    parts = [" ".join(line.strip() for line in part.splitlines() if line.strip())
             for part in _POLARS_ADVICE.sub("\n\n", text).replace("```", "").split("\n\n")]
    words = "; ".join(dict.fromkeys(p for p in parts if p))
    where = f" (near byte {int(offset.group(1)):,})" if offset else ""
    also = "" if problem is None else \
        f"; its quoting also breaks on line {problem[0]:,}: {problem[1]}"
    return f"{path}: cannot be read as CSV{where}: " + \
        (words + also).encode("unicode_escape").decode("ascii")


def _read_text_csv(path: Path, rows: int | None = None) -> pl.DataFrame:
    """Every field as text, as written (bad UTF-8 replaced; a ragged line's extra fields
    dropped, which :func:`read_csv` marks :data:`RAGGED`); the first ``rows`` data rows only,
    if given."""
    try:
        return pl.read_csv(path, separator=separator(path), infer_schema=False, quote_char='"',
                           encoding="utf8-lossy", truncate_ragged_lines=True, n_rows=rows,
                           glob=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(not_csv(path, exc)) from None


def _marked(frame: pl.DataFrame, ragged: RaggedRows) -> pl.DataFrame:
    """``frame`` (``_row``, ``_raw``, fields: the next rows of the file) with :data:`RAGGED`
    set on its ragged rows and their line, verbatim, as ``_raw`` (a file without such rows
    gets no column). Only this frame's ragged rows are looked up, so a batch costs its own
    rows, however many the file has."""
    if not ragged:
        return frame
    last = frame["_row"].max()
    found = ragged.through(last) if isinstance(last, int) else []
    row = pl.col("_row").cast(pl.Int64)
    return frame.with_columns(
        row.replace_strict({g.row: g.raw for g in found}, default=pl.col("_raw"),
                           return_dtype=pl.String).alias("_raw"),
        row.replace_strict({g.row: g.reason for g in found}, default=None,
                           return_dtype=pl.String).alias(RAGGED))


def read_csv(path: Path, options: ReadOptions) -> pl.DataFrame:
    """Card-level or outcome-level rows; delimiter sniffed; headers matched by synonym.
    A row with more or fewer fields than the header is marked :data:`RAGGED`."""
    raw = _read_text_csv(path)
    rename = column_targets(path, raw.columns, options)
    frame = raw.with_row_index("_row", offset=1).with_columns(
        pl.lit(None, dtype=pl.String).alias("_raw"))
    frame = frame.select("_row", "_raw", *[pl.col(c).alias(t) for c, t in rename.items()])
    return _marked(frame, RaggedRows(path, separator(path)))


def _scan_text_csv(path: Path) -> pl.LazyFrame:
    """:func:`_read_text_csv` as a lazy scan, with the 1-based row numbers (``_row``)."""
    return pl.scan_csv(path, separator=separator(path), infer_schema=False, quote_char='"',
                       encoding="utf8-lossy", truncate_ragged_lines=True, glob=False
                       ).with_row_index("_row", offset=1)


def _csv_batches(path: Path, options: ReadOptions, rows: int) -> Iterator[pl.DataFrame]:
    """:func:`read_csv` in batches, streamed by polars (every batch of a file with ragged
    rows has the :data:`RAGGED` column, so that the batches share one schema)."""
    scan = _scan_text_csv(path)
    try:
        names = [c for c in scan.collect_schema().names() if c != "_row"]
        rename = column_targets(path, names, options)
        ragged = RaggedRows(path, separator(path))
        query = scan.select("_row", pl.lit(None, dtype=pl.String).alias("_raw"),
                            *[pl.col(c).alias(t) for c, t in rename.items()])
        for batch in query.collect_batches(chunk_size=rows, maintain_order=True):
            yield _marked(batch, ragged)
    except pl.exceptions.PolarsError as exc:
        raise InputError(not_csv(path, exc)) from None


def raw_rows(path: Path, rows: list[int]) -> dict[int, str]:
    """The given data rows of a CSV file, verbatim field by field, as JSON (for quarantine);
    streamed, so a large file is never held whole."""
    scan = _scan_text_csv(path)
    try:
        names = [c for c in scan.collect_schema().names() if c != "_row"]
        picked = scan.filter(pl.col("_row").is_in(pl.Series(rows, dtype=pl.UInt32).implode()))
        encoded = picked.select("_row", pl.struct(names).struct.json_encode().alias("raw")
                                ).collect()
    except pl.exceptions.PolarsError as exc:
        raise InputError(not_csv(path, exc)) from None
    return {int(r): str(j) for r, j in encoded.iter_rows()}


_SHOE_LINE_SCHEMA = {"_row": pl.Int64, "_raw": pl.String, "table_id": pl.String,
                     "shoe_id": pl.String, "coup": pl.String, "outcome": pl.String}


def read_shoe_lines(path: Path, options: ReadOptions) -> pl.DataFrame:
    """One shoe per line (``BPPTB...``, any outcome spelling of one character)."""
    return pl.DataFrame(list(_shoe_line_rows(path, options)), schema=_SHOE_LINE_SCHEMA,
                        orient="row")


def _text_lines(path: Path, block: int = 1 << 20) -> Iterator[str]:
    """The file's lines as ``str.splitlines`` gives them for the whole text (bad UTF-8
    replaced, a leading BOM dropped), read a block at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    carry, started = "", False
    with path.open("rb") as fh:
        while True:
            raw = fh.read(block)
            text = carry + decoder.decode(raw, final=not raw)
            if not started and text:
                text, started = text.lstrip("\ufeff"), True
            lines = text.splitlines(keepends=True)
            carry = lines.pop() if raw and lines else ""  # the last line may go on
            for line in lines:
                yield line.splitlines()[0] if line.splitlines() else ""
            if not raw:
                return


def _shoe_line_rows(path: Path, options: ReadOptions) -> Iterator[tuple[object, ...]]:
    """The rows of :func:`read_shoe_lines`, line by line (``_SHOE_LINE_SCHEMA`` order)."""
    table = options.table_id or path.stem
    single = sum(1 for _ in islice(_text_lines(path), 2)) == 1
    for number, line in enumerate(_text_lines(path), start=1):
        outcomes = [ch for ch in line if not ch.isspace()]
        if not outcomes:
            continue
        shoe = options.shoe_id if options.shoe_id and single else f"{path.stem}-{number}"
        bad = next((ch for ch in outcomes if ch.lower() not in OUTCOME_LABELS), None)
        if bad is not None:  # the line cannot be numbered reliably: kept whole
            yield (number, json.dumps({"line": line}, ensure_ascii=False), table, shoe, None,
                   f"invalid character {bad!r} in shoe line")
            continue
        for i, ch in enumerate(outcomes, start=1):
            yield (number, json.dumps({"line": number, "coup": i, "outcome": ch},
                                      ensure_ascii=False), table, shoe, str(i), ch)


def read_jsonl(path: Path, options: ReadOptions) -> pl.DataFrame:
    """Journal events (the export format): each ``coup_entered`` event is a coup; any other
    line but another event is quarantined whole (:mod:`roads.ingest.jsonl`)."""
    return pl.DataFrame(list(jsonl.rows(path)), schema=jsonl.SCHEMA, orient="row")


def read_parquet(path: Path, options: ReadOptions) -> pl.DataFrame:
    """Canonical Parquet (the engine's output or another installation's export), or the
    forms a CSV holds (:mod:`roads.ingest.parquet_columns`)."""
    try:
        frame = pl.read_parquet(path, glob=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(f"{path}: cannot be read as Parquet: {exc}") from None
    missing = {"table_id", "shoe_id", "coup", "outcome"} - set(frame.columns)
    if missing:
        raise InputError(f"{path}: not a canonical coups file (missing "
                         f"{', '.join(sorted(missing))})")
    frame = frame.with_columns(staged_columns(path, frame.schema))
    return frame.with_row_index("_row", offset=1).with_columns(
        pl.lit(None, dtype=pl.String).alias("_raw"))
