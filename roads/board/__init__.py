"""The roads of a shoe: per-shoe core (:mod:`.board`), compiled kernel, bulk path."""

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
    parse_outcomes,
)

__all__ = [
    "DERIVED", "LEADING_TIES", "ROAD_NAMES", "Ask", "BeadCell", "BigRoadCell", "Board",
    "CoupInfo", "LeadingTies", "Mark", "OutcomeError", "parse_outcomes",
]
