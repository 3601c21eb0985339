"""The Dash dashboard, table-side screens, operator entry and HTTP API (``roads serve``).

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from dashboard.app import create_app
    from dashboard.config import SiteConfig, load_config
    from dashboard.context import Context

_WHERE = {
    "create_app": "dashboard.app",
    "Context": "dashboard.context",
    "SiteConfig": "dashboard.config",
    "load_config": "dashboard.config",
}
__all__ = ["Context", "SiteConfig", "create_app", "load_config"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
