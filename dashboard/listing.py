"""What the server-rendered listings (history, audit trail) share: filters read from the
query string, with errors that name the field, and the pager ("shoes 1–50 of 100,000").

Filters and the page number live in the URL, so a listing can be bookmarked, shared and
paged with plain links, and every page is one request that the server answers with one
indexed query (no page ever loads the whole record).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import urlencode

from roads.errors import InputError

PAGE_SIZE = 50
#: The longest filter value a listing accepts (ids are far shorter; see roads.ingest.bounds).
MAX_VALUE = 200
#: The deepest page a listing serves (50 a page: 10 million rows).
MAX_PAGE = 200_000


class FilterError(InputError):
    """A filter the listing cannot use; ``field`` names it as the form does."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def text(query: Mapping[str, str], name: str) -> str | None:
    """A text filter: None when absent or blank."""
    value = query.get(name, "").strip()
    if len(value) > MAX_VALUE:
        raise FilterError(name, f"at most {MAX_VALUE} characters")
    return value or None


def day(query: Mapping[str, str], name: str) -> date | None:
    """A day filter (``YYYY-MM-DD``, as a date input sends it)."""
    value = text(query, name)
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise FilterError(name, f"{value!r} is not a day (YYYY-MM-DD)") from None


def days(query: Mapping[str, str]) -> tuple[date | None, date | None]:
    """The ``from``..``to`` range, refused when it ends before it starts."""
    start, end = day(query, "from"), day(query, "to")
    if start and end and end < start:
        raise FilterError("to", f"{end.isoformat()} is before the first day "
                                f"{start.isoformat()}")
    return start, end


def page_number(query: Mapping[str, str]) -> int:
    value = text(query, "page") or "1"
    if not value.isdigit() or not 1 <= int(value) <= MAX_PAGE:
        raise FilterError("page", f"{value!r} is not a page number (1 to {MAX_PAGE:,})")
    return int(value)


def kept(start: date | None = None, end: date | None = None,
         **values: str | None) -> dict[str, str]:
    """The filters in use as the form names them (what every page link carries): the day
    range as ``from`` and ``to``, the others by their own names."""
    out = {k: v for k, v in values.items() if v}
    out.update({name: day.isoformat() for name, day in (("from", start), ("to", end)) if day})
    return out


def offset(page: int, size: int = PAGE_SIZE) -> int:
    """The first row of page ``page`` (from 1)."""
    return (page - 1) * size


def choice(query: Mapping[str, str], name: str, allowed: Mapping[str, object]) -> str | None:
    """A filter that must be one of ``allowed``'s keys."""
    value = text(query, name)
    if value is not None and value not in allowed:
        raise FilterError(name, f"{value!r} is not one of the choices")
    return value


@dataclass(frozen=True, slots=True)
class Pager:
    """Where a page is in its listing: ``page`` (from 1) of ``size`` rows out of ``total``;
    ``kept`` are the filters every link carries."""

    path: str
    page: int
    total: int
    noun: tuple[str, str]  # singular, plural
    kept: dict[str, str] = field(default_factory=dict)
    size: int = PAGE_SIZE

    @property
    def offset(self) -> int:
        return offset(self.page, self.size)

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def previous(self) -> int | None:
        return min(self.page - 1, self.pages) if self.page > 1 else None

    @property
    def next(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None

    @property
    def words(self) -> str:
        one, many = self.noun
        if self.total == 0:
            return f"No {many} match."
        if self.offset >= self.total:
            return (f"Page {self.page:,} is past the end: {self.total:,} {many} in "
                    f"{self.pages:,} pages.")
        if self.total == 1:
            return f"1 {one}"
        last = min(self.offset + self.size, self.total)
        return f"{many.capitalize()} {self.offset + 1:,}–{last:,} of {self.total:,}"

    def link(self, page: int) -> str:
        """The URL of another page of the same listing."""
        return f"{self.path}?{urlencode({**self.kept, 'page': page})}"
