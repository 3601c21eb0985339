"""The same per-shoe work on one machine or on Apache Spark (``pip install ".[spark]"``).

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from roads.scale.engines import (
        SparkOptions,
        roads_local,
        roads_spark,
        simulate_local,
        simulate_spark,
        stats_local,
        stats_spark,
    )

_WHERE = {
    "SparkOptions": "roads.scale.engines",
    "roads_local": "roads.scale.engines",
    "roads_spark": "roads.scale.engines",
    "stats_local": "roads.scale.engines",
    "stats_spark": "roads.scale.engines",
    "simulate_local": "roads.scale.engines",
    "simulate_spark": "roads.scale.engines",
}
__all__ = ["SparkOptions", "roads_local", "roads_spark", "simulate_local", "simulate_spark",
           "stats_local", "stats_spark"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
