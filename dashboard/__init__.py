"""The Dash dashboard, table-side screens, operator entry and HTTP API (``roads serve``).

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "create_app": "dashboard.app",
    "Context": "dashboard.context",
    "SiteConfig": "dashboard.config",
    "load_config": "dashboard.config",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
