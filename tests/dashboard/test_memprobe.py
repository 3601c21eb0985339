"""The soak's opt-in memory record (``ROADS_MEMPROBE``): nothing unless asked for; when
asked, a line of JSON per interval with the process's and the allocator's counts, and with
tracing the lines and types that grew since the reference record."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from dashboard import memprobe


def _lines(path: Path, at_least: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and len(text := path.read_text().splitlines()) >= at_least:
            return [json.loads(line) for line in text[:at_least]]
        time.sleep(0.02)
    raise AssertionError(f"{path}: fewer than {at_least} records in 30 s")


def test_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(memprobe.ENV, raising=False)
    assert memprobe.start() is None


def test_records_the_process_without_tracing(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    for name, value in ((memprobe.ENV, str(tmp_path)), (memprobe.SECONDS_ENV, "0.01"),
                        (memprobe.FRAMES_ENV, "0")):
        monkeypatch.setenv(name, value)
    stop = memprobe.start()
    assert stop is not None
    try:
        first, second = _lines(tmp_path / f"worker-{os.getpid()}.jsonl", 2)
    finally:
        stop.set()
    assert not tracemalloc.is_tracing()
    assert first["smaps"]["Rss"] > 0 and first["blocks"] > 0 and first["traced"] == 0
    assert second["at"] >= first["at"] and "lines" not in second


class Held:
    """A collector-tracked object (the types counted are the ones ``gc`` tracks)."""

    def __init__(self) -> None:
        self.data = bytearray(1000)


def test_traced_growth_names_its_line(tmp_path: Path) -> None:
    tracemalloc.start(1)
    try:
        path = tmp_path / "record.jsonl"
        first, types = memprobe._record(path, time.monotonic(), None, None)
        kept = [Held() for _ in range(500)]  # the growth
        memprobe._record(path, time.monotonic(), first, types)
    finally:
        tracemalloc.stop()
    grown = _lines(path, 2)[1]
    where, size, count = grown["lines"][0]
    assert where.startswith(__file__) and size >= 500 * 1000 and count >= 500
    assert ["Held", 500] in [list(t) for t in grown["types"]] and len(kept) == 500
