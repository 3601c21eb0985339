"""An opt-in record of what a worker's memory holds, for the soak benchmark (issue 18).

Off unless ``ROADS_MEMPROBE`` names a directory when ``roads serve`` starts: then each worker
traces its allocations (``tracemalloc``) and every ``ROADS_MEMPROBE_SECONDS`` (60) appends a
line of JSON to ``<dir>/worker-<pid>.jsonl``: the process's memory from
``/proc/self/smaps_rollup``, jemalloc's own counts when it is the allocator (live blocks
against pages held), Python's traced bytes, the source lines whose traced bytes grew most
since the record at ``ROADS_MEMPROBE_FROM`` seconds (300), and the object types whose count
grew most. Nothing is served over HTTP: the record is a file only whoever starts the server
can name, so no client reaches it. (With tracing on, the snapshots grow the worker and cost
it most of a core: read the lines, not the RSS; ``ROADS_MEMPROBE_FRAMES=0`` records only the
counts, at no measurable cost.)
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

#: The environment variable naming the record's directory (unset: no probe).
ENV = "ROADS_MEMPROBE"
#: Seconds between records.
SECONDS_ENV = "ROADS_MEMPROBE_SECONDS"
#: Seconds after the start of the record the others are compared with (what a worker
#: fills as its screens open is left out).
FROM_ENV = "ROADS_MEMPROBE_FROM"
#: Frames kept per traced allocation (more name the caller better and cost more);
#: ``ROADS_MEMPROBE_FRAMES=0``: no tracing, only the process's and jemalloc's counts.
FRAMES = 6
FRAMES_ENV = "ROADS_MEMPROBE_FRAMES"
#: Lines and types listed per record.
TOP = 25


def _smaps() -> dict[str, int]:
    """The process's memory by kind, in kB (Rss, Pss, Anonymous, ...)."""
    found: dict[str, int] = {}
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
            name, value = line.split(":", 1)
            found[name] = int(value.split()[0])
    except OSError:
        pass
    return found


def _jemalloc() -> dict[str, int]:
    """jemalloc's counts in bytes (allocated: live blocks; active, resident, retained: pages
    it holds), or nothing when another allocator serves the process."""
    try:
        lib = ctypes.CDLL(None)
        mallctl = lib.mallctl
    except (OSError, AttributeError):
        return {}
    mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                        ctypes.c_void_p, ctypes.c_size_t]
    epoch = ctypes.c_uint64(1)
    size = ctypes.c_size_t(8)
    mallctl(b"epoch", ctypes.byref(epoch), ctypes.byref(size), ctypes.byref(epoch), 8)
    found = {}
    for name in ("allocated", "active", "resident", "mapped", "retained", "metadata"):
        value, size = ctypes.c_size_t(0), ctypes.c_size_t(ctypes.sizeof(ctypes.c_size_t))
        if mallctl(f"stats.{name}".encode(), ctypes.byref(value), ctypes.byref(size),
                   None, 0) == 0:
            found[name] = value.value
    return found


def _types() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def _record(path: Path, began: float, first: tracemalloc.Snapshot | None,
            first_types: Counter[str] | None
            ) -> tuple[tracemalloc.Snapshot | None, Counter[str] | None]:
    line: dict[str, Any] = {"at": round(time.monotonic() - began), "smaps": _smaps(),
                            "jemalloc": _jemalloc(),
                            "traced": tracemalloc.get_traced_memory()[0],
                            "blocks": sys.getallocatedblocks(), "gc": gc.get_count()}
    snapshot, types = None, None
    if tracemalloc.is_tracing():
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),
             tracemalloc.Filter(False, __file__)))  # the probe's own records are no growth
        types = _types()
    if first is not None and first_types is not None and snapshot is not None \
            and types is not None:
        line["lines"] = [[str(d.traceback), d.size_diff, d.count_diff]
                         for d in snapshot.compare_to(first, "lineno")[:TOP]]
        line["stacks"] = [[[str(f) for f in d.traceback], d.size_diff, d.count_diff]
                          for d in snapshot.compare_to(first, "traceback")[:8]]
        grown = types.copy()
        grown.subtract(first_types)
        line["types"] = grown.most_common(TOP)
    with path.open("a") as f:
        f.write(json.dumps(line) + "\n")
    return snapshot, types


def start() -> threading.Event | None:
    """Start recording in this process when ``ROADS_MEMPROBE`` asks for it (else nothing);
    the event that stops it."""
    where = os.environ.get(ENV)
    if not where:
        return None
    seconds = float(os.environ.get(SECONDS_ENV, "60"))
    settled = float(os.environ.get(FROM_ENV, "300"))
    path = Path(where) / f"worker-{os.getpid()}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if (frames := int(os.environ.get(FRAMES_ENV, str(FRAMES)))) > 0:
        tracemalloc.start(frames)
    began, stop = time.monotonic(), threading.Event()

    def run() -> None:
        first: tracemalloc.Snapshot | None = None
        first_types: Counter[str] | None = None
        while not stop.wait(seconds):
            snapshot, types = _record(path, began, first, first_types)
            if first is None and time.monotonic() - began >= settled:
                first, first_types = snapshot, types

    threading.Thread(target=run, name="memprobe", daemon=True).start()
    return stop
