"""The repository is self-contained: nothing in it reads files from outside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Built from pieces so this file does not match itself.
OUTSIDE = ("../" + "shared", "/work/" + "shared")


#: Not the repository's content: tools' output, caches, local data (all git-ignored).
SKIPPED = {".git", ".venv", ".cache", ".mypy_cache", ".ruff_cache", ".pytest_cache",
           ".hypothesis", "__pycache__", "build", ".bench-venv", ".bench-node", "data/store",
           "data/demo", "data/screenshots"}


def _repository_files() -> list[Path]:
    """Every file of the checkout (walked, so it needs no git and sees new files too)."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        here = Path(folder).relative_to(ROOT)
        dirs[:] = [d for d in dirs if d not in SKIPPED and (here / d).as_posix() not in SKIPPED
                   and not d.endswith(".egg-info")]
        found += [Path(folder) / f for f in files]
    return found


def test_nothing_refers_to_the_shared_folder_outside_the_repository() -> None:
    files = _repository_files()
    assert any(f.parent == ROOT / "roads" / "store" for f in files)  # the walk reaches code
    offenders = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (Parquet, images) or unreadable
        offenders += [f"{path.relative_to(ROOT)}:{n}" for n, line in
                      enumerate(text.splitlines(), start=1) if any(o in line for o in OUTSIDE)]
    assert offenders == []


def test_the_fixtures_and_the_road_rules_are_in_the_repository() -> None:
    for name in ("tests/fixtures/exact_odds.json", "tests/fixtures/roads_live_platform.json",
                 "docs/roads-rules.md"):
        assert (ROOT / name).stat().st_size > 1000, name
