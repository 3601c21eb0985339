"""Shared fixtures: the read-only test data in ../shared/fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def exact_fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SHARED / "fixtures" / "exact_odds.json").read_text())
    return data
