"""Injected kill points, so crash tests kill a write *inside* a stage instead of guessing
with a sleep.

``ROADS_KILL_AT=name`` (or several, comma-separated) makes the process SIGKILL itself the
first time it reaches :func:`point` with that name; ``ROADS_KILL_AFTER=n`` lets the point
pass ``n`` times first (e.g. after the third part file). Unset, a point costs one dict
lookup.
"""

from __future__ import annotations

import os
import signal

_PASSED: dict[str, int] = {}


def point(name: str) -> None:
    wanted = os.environ.get("ROADS_KILL_AT")
    if not wanted or name not in wanted.split(","):
        return
    seen = _PASSED.get(name, 0)
    _PASSED[name] = seen + 1
    if seen >= int(os.environ.get("ROADS_KILL_AFTER", "0")):
        os.kill(os.getpid(), signal.SIGKILL)
