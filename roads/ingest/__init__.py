"""Every way a coup comes in: one converter per source (files, the HTTP API, the operator
screen, the demo dealers, the engine) and one set of bounds for all of them.

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from roads.ingest.engine_batches import batch_tables
    from roads.ingest.entry import CoupEntry, EntryError, ShoeContext, canonical_fields, check_coup
    from roads.ingest.readers import ReadOptions
    from roads.ingest.run import IngestResult, ingest
    from roads.ingest.sources import from_api, from_dealer, from_operator

_WHERE = {
    "ingest": "roads.ingest.run",
    "IngestResult": "roads.ingest.run",
    "ReadOptions": "roads.ingest.readers",
    "CoupEntry": "roads.ingest.entry",
    "EntryError": "roads.ingest.entry",
    "ShoeContext": "roads.ingest.entry",
    "check_coup": "roads.ingest.entry",
    "canonical_fields": "roads.ingest.entry",
    "from_api": "roads.ingest.sources",
    "from_operator": "roads.ingest.sources",
    "from_dealer": "roads.ingest.sources",
    "batch_tables": "roads.ingest.engine_batches",
}
__all__ = ["CoupEntry", "EntryError", "IngestResult", "ReadOptions", "ShoeContext",
           "batch_tables", "canonical_fields", "check_coup", "from_api", "from_dealer",
           "from_operator", "ingest"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
