"""The store: canonical Parquet files that answer to the hash-chained journal.

Public names only; everything else in this package is the store's own business (the
architecture test holds every other package to these names).
"""

from roads.store.corrections import MARK, apply_corrections
from roads.store.journal import SYSTEM, Event, Journal, JournalError
from roads.store.journaled import shoe_frames
from roads.store.read import ALL, Selection, StoreReadError
from roads.store.store import NoStore, Part, Store, StoreError, Written

__all__ = ["ALL", "MARK", "SYSTEM", "Event", "Journal", "JournalError", "NoStore", "Part",
           "Selection", "Store", "StoreError", "StoreReadError", "Written", "apply_corrections",
           "shoe_frames"]
