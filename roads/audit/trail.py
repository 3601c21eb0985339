"""The audit trail and retention: who did what when, and what may be deleted.

Every journaled action is listed with its actor and time (`roads audit`). Retention is a
jurisdiction profile with a minimum period; `roads purge --before D` refuses to delete
anything younger than that, and journals what it deletes before deleting it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from roads.errors import InputError
from roads.store import Store

#: Minimum retention in years by jurisdiction profile (as publicly summarised; check the
#: regulation before relying on a figure).
RETENTION_YEARS: dict[str, int] = {
    "nevada": 5,
    "new-jersey": 5,
    "maryland": 5,
    "nebraska": 7,
    "macau": 5,
    "default": 7,
}


def audit_trail(store: Store, table_id: str | None = None, start: date | None = None,
                end: date | None = None) -> list[dict[str, Any]]:
    """Every journaled action in order: sequence, time, kind, table, shoe, who, details."""
    rows = []
    for e in store.journal.events(table_id):
        day = datetime.fromisoformat(e.at).date()
        if (start and day < start) or (end and day > end):
            continue
        details = {k: v for k, v in e.payload.items()
                   if k in ("coup", "reason", "approver", "rules", "files", "before",
                            "partitions", "profile", "user", "role", "address", "request",
                            "action", "key_id", "change", "parameters", "data_digest")}
        rows.append({"seq": e.seq, "at": e.at, "kind": e.kind, "table_id": e.table_id,
                     "shoe_id": e.shoe_id, "actor": e.actor, "details": details})
    return rows


def retention_cutoff(profile: str, today: date | None = None) -> date:
    """The oldest day that must still be kept under ``profile``."""
    if profile not in RETENTION_YEARS:
        raise InputError(f"unknown retention profile {profile!r}; known: "
                         f"{', '.join(RETENTION_YEARS)}")
    today = today or datetime.now(UTC).date()
    years = RETENTION_YEARS[profile]
    try:
        return today.replace(year=today.year - years)
    except ValueError:  # 29 February in a year that has none
        return today.replace(year=today.year - years, day=28)


def purge(store: Store, before: date, actor: str, profile: str = "default",
          today: date | None = None) -> list[str]:
    """Delete the day partitions older than ``before``; refuse inside the retention period.

    Both the partition's date and the journal's own time count: a partition is kept while
    it is younger than the period, and also while it holds anything the journal received
    inside the period (a backdated coup cannot make fresh data look old). The deletion is
    journaled (who, which files, under which profile) before any file goes.
    """
    cutoff = retention_cutoff(profile, today)
    if before > cutoff:
        raise InputError(f"refused: {before.isoformat()} is inside the {profile} retention "
                         f"period ({RETENTION_YEARS[profile]} years: data from "
                         f"{cutoff.isoformat()} on must be kept)")
    keep_since = datetime.combine(cutoff, datetime.min.time(), UTC)
    return store.purge(before, keep_since, actor, profile)
