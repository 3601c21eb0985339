"""The repository is self-contained: nothing in it reads files from outside the checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Built from pieces so this file does not match itself.
OUTSIDE = ("../" + "shared", "/work/" + "shared")


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    return [ROOT / line for line in listed.splitlines() if (ROOT / line).is_file()]


def test_nothing_refers_to_the_shared_folder_outside_the_repository() -> None:
    files = _tracked_files()
    assert any(f.name == "conftest.py" for f in files)  # the listing itself works
    offenders = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(ROOT)}:{n}" for n, line in
                      enumerate(text.splitlines(), start=1) if any(o in line for o in OUTSIDE)]
    assert offenders == []


def test_the_fixtures_and_the_road_rules_are_in_the_repository() -> None:
    for name in ("tests/fixtures/exact_odds.json", "tests/fixtures/roads_live_platform.json",
                 "docs/roads-rules.md"):
        assert (ROOT / name).stat().st_size > 1000, name
