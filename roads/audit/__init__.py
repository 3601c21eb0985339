"""Compliance: verifiable export bundles, their offline check, the audit trail and retention.

Public names are loaded on first use, so importing one module of the package (the API's
request models, say) does not load the rest.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them
    from roads.audit.bundle import Slice, export_bundle, generate_keys
    from roads.audit.bundle_check import BundleError, verify
    from roads.audit.trail import audit_trail, purge, retention_cutoff

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
__all__ = ["BundleError", "Slice", "audit_trail", "export_bundle", "generate_keys", "purge",
           "retention_cutoff", "verify"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
