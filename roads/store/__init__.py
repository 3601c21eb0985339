"""The store: canonical Parquet files that answer to the hash-chained journal.

Public names only. Other packages import from here, or from the modules that define formats
an offline checker needs (``journal``, ``digest``, ``checkpoint``) and ``verify``; the rest
of the package is the store's own business, and the architecture test holds everyone to it.
"""

from roads.store.corrections import MARK, apply_corrections
from roads.store.journal import SYSTEM, Event, Journal, JournalError
from roads.store.journaled import coup_row, coups_frame, shoe_frames
from roads.store.read import (
    ALL,
    Selection,
    StoreReadError,
    outcome_columns,
    statistics_columns,
    to_statistics,
)
from roads.store.store import NoStore, Part, Store, StoreError, Written, write_part

__all__ = ["ALL", "MARK", "SYSTEM", "Event", "Journal", "JournalError", "NoStore", "Part",
           "Selection", "Store", "StoreError", "StoreReadError", "Written", "apply_corrections",
           "coup_row", "coups_frame", "outcome_columns", "shoe_frames", "statistics_columns",
           "to_statistics", "write_part"]
