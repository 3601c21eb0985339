"""The store: canonical Parquet files that answer to the hash-chained journal.

Public names only (loaded on first use, so the journal can be used without the data stack).
Other packages import from here, or from the modules that define formats an offline checker
needs (``journal``, ``digest``, ``checkpoint``) and ``verify``; the rest of the package is
the store's own business, and the architecture test holds everyone to it.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from roads.store.accounts import SESSION_HOURS, credential_digest
    from roads.store.catalog import StagedRows
    from roads.store.corrections import CORRECTION_KINDS, MARK, apply_corrections
    from roads.store.early import EarlyReads
    from roads.store.journal import SYSTEM, Event, Journal, JournalError
    from roads.store.journaled import Content, coup_row, coups_frame, shoe_frames
    from roads.store.layout import ATTACHMENTS, SPILL, TEMPORARY_PREFIX
    from roads.store.read import (
        ALL,
        Reader,
        Selection,
        StoreReadError,
        outcome_columns,
        statistics_columns,
        to_statistics,
    )
    from roads.store.store import (
        NoStore,
        Part,
        Preceding,
        Store,
        StoreError,
        Written,
        write_part,
    )

_WHERE = {
    "SESSION_HOURS": "roads.store.accounts",
    "credential_digest": "roads.store.accounts",
    "StagedRows": "roads.store.catalog",
    "CORRECTION_KINDS": "roads.store.corrections",
    "MARK": "roads.store.corrections",
    "apply_corrections": "roads.store.corrections",
    "EarlyReads": "roads.store.early",
    "SYSTEM": "roads.store.journal",
    "Event": "roads.store.journal",
    "Journal": "roads.store.journal",
    "JournalError": "roads.store.journal",
    "Content": "roads.store.journaled",
    "coup_row": "roads.store.journaled",
    "coups_frame": "roads.store.journaled",
    "shoe_frames": "roads.store.journaled",
    "ATTACHMENTS": "roads.store.layout",
    "SPILL": "roads.store.layout",
    "TEMPORARY_PREFIX": "roads.store.layout",
    "ALL": "roads.store.read",
    "Reader": "roads.store.read",
    "Selection": "roads.store.read",
    "StoreReadError": "roads.store.read",
    "outcome_columns": "roads.store.read",
    "statistics_columns": "roads.store.read",
    "to_statistics": "roads.store.read",
    "NoStore": "roads.store.store",
    "Part": "roads.store.store",
    "Preceding": "roads.store.store",
    "Store": "roads.store.store",
    "StoreError": "roads.store.store",
    "Written": "roads.store.store",
    "write_part": "roads.store.store",
}
__all__ = [
    "ALL",
    "ATTACHMENTS",
    "CORRECTION_KINDS",
    "MARK",
    "SESSION_HOURS",
    "SPILL",
    "SYSTEM",
    "TEMPORARY_PREFIX",
    "Content",
    "EarlyReads",
    "Event",
    "Journal",
    "JournalError",
    "NoStore",
    "Part",
    "Preceding",
    "Reader",
    "Selection",
    "StagedRows",
    "Store",
    "StoreError",
    "StoreReadError",
    "Written",
    "apply_corrections",
    "coup_row",
    "coups_frame",
    "credential_digest",
    "outcome_columns",
    "shoe_frames",
    "statistics_columns",
    "to_statistics",
    "write_part",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
