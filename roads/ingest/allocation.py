"""The allocator setting a file ingest runs with.

An ingest frees and allocates the same few hundred megabytes bucket after bucket. polars'
allocator (jemalloc) hands freed pages back to the system within a second or so (polars
starts it with ``dirty_decay_ms:500,muzzy_decay_ms:1000``; the environment's setting is
read after those, so it wins), so
every bucket faulted them in again: 615,000-720,000 page faults and 5.4-6.5 s of system
time for a 4 M-coup file, about a quarter of the run's CPU. Kept five seconds before they go back
(long enough to span a bucket, short enough that memory still follows the chunk), the
pages are reused instead (see ``docs/store.md`` for the measurements).

jemalloc reads the setting once, when polars loads: entry points call
:func:`keep_freed_pages` before anything imports polars (``roads ingest`` does; a setting
the environment already holds is left as it is).
"""

from __future__ import annotations

import os

#: jemalloc's options as polars' build reads them from the environment.
VARIABLE = "_RJEM_MALLOC_CONF"
#: Freed pages stay mapped 5 s (dirty), then go back at once (no lazy "muzzy" stage).
SETTING = "dirty_decay_ms:5000,muzzy_decay_ms:0"


def keep_freed_pages() -> None:
    """Set :data:`SETTING` for polars' allocator unless the environment sets its own
    (no effect once polars is loaded)."""
    os.environ.setdefault(VARIABLE, SETTING)
