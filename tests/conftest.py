"""Shared fixtures: the read-only test data in ../shared/fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

#: The nearest ``shared`` folder above the repository (``../shared`` of a checkout, also from a
#: git worktree one level deeper).
SHARED = next((p / "shared" for p in Path(__file__).resolve().parents if (p / "shared").is_dir()),
              Path(__file__).resolve().parents[2] / "shared")


@pytest.fixture(scope="session")
def exact_fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHARED / "fixtures" / "exact_odds.json").read_text())
    return data
