"""Shared fixtures: the read-only test data in tests/fixtures/ (inside the repository)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_json(name: str) -> Any:
    """One of the JSON fixtures in tests/fixtures/, parsed."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def exact_fixture() -> dict[str, Any]:
    data: dict[str, Any] = fixture_json("exact_odds.json")
    return data
