"""Compliance: verifiable export bundles, their offline check, the audit trail and retention.

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "Slice": "roads.audit.bundle",
    "export_bundle": "roads.audit.bundle",
    "generate_keys": "roads.audit.bundle",
    "verify": "roads.audit.bundle_check",
    "BundleError": "roads.audit.bundle_check",
    "audit_trail": "roads.audit.trail",
    "purge": "roads.audit.trail",
    "retention_cutoff": "roads.audit.trail",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
