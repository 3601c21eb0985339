"""Every byte of a checkpoint file is accounted for (attack7 F3): a line must be exactly the
line its values make. A signature checks the parsed values only, so before, a tab for a
space, a trailing space or an upper-case hex digit of a signature passed `store verify`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from roads.store import Store
from roads.store.verify import verify
from tests.floor import Floor


def _upper_signature(line: str) -> str:
    at = line.index('"signature": "') + len('"signature": "')
    digit = next(i for i in range(at, len(line)) if line[i] in "abcdef")
    return line[:digit] + line[digit].upper() + line[digit + 1:]


EDITS: dict[str, Callable[[str], str]] = {
    "a tab for a space": lambda line: line.replace(", ", ",\t", 1),
    "a trailing space": lambda line: line + " ",
    "an upper-case hex digit of the signature": _upper_signature,
    "keys out of order": lambda line: json.dumps(dict(reversed(json.loads(line).items()))),
    "an extra field": lambda line: line[:-1] + ', "note": "x"}',
    "a number as text": lambda line: line.replace('"seq": ', '"seq": "', 1).replace(
        ', "signature"', '", "signature"', 1),
}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    floor = Floor(tmp_path / "store").sealed_shoe("T1", "S1", "BPPBT")
    assert verify(floor.store).ok
    return floor.store


def _edit_last(path: Path, edit: Callable[[str], str]) -> int:
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    lines[-1] = edit(lines[-1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


@pytest.mark.parametrize("what", sorted(EDITS))
def test_a_checkpoint_line_not_as_written_is_named(store: Store, what: str) -> None:
    path = store.root / "checkpoints" / "checkpoints.jsonl"
    number = _edit_last(path, EDITS[what])
    problems = [p for p in verify(Store.open(store.root)).problems if p["kind"] == "checkpoint"]
    assert problems and f"checkpoints.jsonl line {number} is not a checkpoint" in \
        problems[0]["detail"], (what, problems)


@pytest.mark.parametrize("what", ["a blank line", "no newline at the end"])
def test_bytes_between_or_after_the_lines_are_named(store: Store, what: str) -> None:
    path = store.root / "checkpoints" / "checkpoints.jsonl"
    data = path.read_bytes()
    path.write_bytes(data + b"\n" if what == "a blank line" else data[:-1])
    problems = [p for p in verify(Store.open(store.root)).problems if p["kind"] == "checkpoint"]
    assert problems and "is not a checkpoint" in problems[0]["detail"], (what, problems)
