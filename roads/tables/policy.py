"""Who may do what at a live table: each action needs one permission, and each actor has
the permissions of its role (a user) or of its scope (a table's API key).

A table key is what a card-reading shoe or a table system holds: it may open a shoe, enter
coups and close the shoe, at its own table only. People act through their role
(``roads.auth.PERMISSIONS``): dealers enter and ask for corrections, supervisors also
approve them (never their own), auditors read and export, viewers read. On a floor whose
site lists its tables, only a supervisor opens the first shoe of a table it does not list, so a
mistyped table id is refused instead of becoming a new table.
"""

from __future__ import annotations

from dataclasses import dataclass

from roads.auth import PERMISSIONS
from roads.errors import InputError

#: The permission each live action needs.
ACTION_PERMISSION = {
    "open_shoe": "enter", "enter_coup": "enter", "close_shoe": "enter", "close_table": "enter",
    "ask": "enter", "preview": "enter", "request_correction": "request_correction",
    "decide_correction": "approve", "open_table": "approve", "read": "read", "audit": "audit",
    "export": "audit",
}
#: What a table key may do (at its own table).
KEY_ACTIONS = frozenset({"open_shoe", "enter_coup", "close_shoe"})


class Forbidden(InputError):
    """The actor may not do this (the API answers 403)."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts: a user with a role, or a table key (``role`` None, ``table`` its table).

    ``name`` is what the journal records (a user name, ``key:ID``, ``demo-dealer``)."""

    name: str
    role: str | None = None
    table: str | None = None

    @classmethod
    def user(cls, name: str, role: str) -> Actor:
        return cls(name, role)

    @classmethod
    def key(cls, key_id: str, table_id: str) -> Actor:
        return cls(f"key:{key_id}", None, table_id)

    def may(self, action: str, table_id: str | None = None) -> bool:
        if self.role is None:
            return action in KEY_ACTIONS and table_id is not None and table_id == self.table
        return ACTION_PERMISSION.get(action, action) in PERMISSIONS.get(self.role, frozenset())


def authorize(actor: Actor, action: str, table_id: str | None = None) -> None:
    """Refuse (:class:`Forbidden`, in words) what the actor may not do."""
    if actor.may(action, table_id):
        return
    what = action.replace("_", " ")
    if actor.role is None:
        raise Forbidden(f"this key is for table {actor.table}; it may not {what}"
                        + (f" at table {table_id}" if table_id else ""))
    raise Forbidden(f"role {actor.role} may not {what}")
