"""The roads of a shoe: per-shoe core (:mod:`.board`), its compiled state machine and JSON
writer (:mod:`.machine`, run as plain Python by :mod:`.plain` until a process has used it
for a while), and the bulk path (:mod:`.bulk`)."""

from roads.board.board import (
    DERIVED,
    LEADING_TIES,
    ROAD_NAMES,
    Ask,
    BeadCell,
    BigRoadCell,
    Board,
    CoupInfo,
    LeadingTies,
    Mark,
    OutcomeError,
    apply_delta,
    check_leading_ties,
    compiled_machine,
    parse_outcomes,
)

__all__ = [
    "DERIVED", "LEADING_TIES", "ROAD_NAMES", "Ask", "BeadCell", "BigRoadCell", "Board",
    "CoupInfo", "LeadingTies", "Mark", "OutcomeError", "apply_delta", "check_leading_ties",
    "compiled_machine", "parse_outcomes",
]
