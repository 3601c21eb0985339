"""Statistics against exact expectations, randomness tests, integrity checks, live odds:
pure functions of coups and shoes.

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from roads.stats.integrity import integrity_checks
    from roads.stats.odds_series import odds_series
    from roads.stats.partials import finalize, partial
    from roads.stats.per_shoe import shoe_summary
    from roads.stats.randomness import randomness_tests
    from roads.stats.report import report, shoe_odds

_WHERE = {
    "report": "roads.stats.report",
    "shoe_odds": "roads.stats.report",
    "integrity_checks": "roads.stats.integrity",
    "randomness_tests": "roads.stats.randomness",
    "odds_series": "roads.stats.odds_series",
    "shoe_summary": "roads.stats.per_shoe",
    "partial": "roads.stats.partials",
    "finalize": "roads.stats.partials",
}
__all__ = ["finalize", "integrity_checks", "odds_series", "partial", "randomness_tests",
           "report", "shoe_odds", "shoe_summary"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
