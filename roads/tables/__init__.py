"""Live tables: the one service every live entry point calls, its policy and read models."""

from roads.ingest.entry import CoupEntry, EntryError
from roads.tables.actions import CoupConflict, LiveError
from roads.tables.policy import ACTION_PERMISSION, Actor, Forbidden, authorize
from roads.tables.service import (
    DEMO_DEALER,
    Settings,
    TableService,
    open_service,
    preset_rule_set,
)
from roads.tables.state import TableState, TableStatus

__all__ = ["ACTION_PERMISSION", "DEMO_DEALER", "Actor", "CoupConflict", "CoupEntry",
           "EntryError", "Forbidden", "LiveError", "Settings", "TableService", "TableState",
           "TableStatus", "authorize", "open_service", "preset_rule_set"]
