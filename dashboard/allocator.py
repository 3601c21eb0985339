"""``roads serve`` on jemalloc where the machine has it (Debian's ``libjemalloc2``).

A soak's workers kept what glibc's heap freed among blocks that live on: their memory rose
all run long while their bytes in use stayed level (floor6). jemalloc keeps blocks of one
size class together and gives pages that empty back after a few seconds, so freed memory
does not stay stranded (soak7). The workers are forked, so the allocator must be in the
server's process before it starts: ``roads serve`` runs itself again with jemalloc
preloaded, once, before it has done anything else. Without the library, or with
``ROADS_SERVE_MALLOC=system``, it keeps glibc's (whose arenas and thresholds
:func:`limit_arenas` sets).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Mapping
from pathlib import Path

#: The C heap's arenas a server process may have (glibc's ``M_ARENA_MAX``, :func:`limit_arenas`).
ARENAS = 2
#: Blocks from this size up get pages of their own (glibc's ``M_MMAP_THRESHOLD``), handed
#: back whole when freed: a screen's ~50 KB messages and their compression, not strands of
#: the heap between blocks that live on (:func:`limit_arenas`).
MMAP_THRESHOLD = 32 << 10
#: Free memory at the heap's top beyond this goes back to the system (``M_TRIM_THRESHOLD``).
TRIM_THRESHOLD = 128 << 10
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8


#: Where Debian and most Linux systems put the library (libjemalloc2).
LIBRARY = "libjemalloc.so.2"
PLACES = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
          "/usr/lib", "/usr/local/lib")
#: ``system``: keep the C library's allocator.
CHOICE = "ROADS_SERVE_MALLOC"
#: Set for the run again, so that a preload that did not take is not tried twice.
_AGAIN = "ROADS_SERVE_MALLOC_AGAIN"


def library(places: tuple[str, ...] = PLACES) -> str | None:
    """The jemalloc library's path on this machine, or None."""
    for place in places:
        if (path := Path(place) / LIBRARY).is_file():
            return str(path)
    return None


def loaded() -> bool:
    """Whether this process's allocator is jemalloc (its library is mapped)."""
    try:
        with open("/proc/self/maps") as maps:
            return any("libjemalloc" in line for line in maps)
    except OSError:  # not Linux
        return False


def preload_env(env: Mapping[str, str], path: str) -> dict[str, str]:
    """``env`` with ``path`` preloaded before what it preloads already."""
    again = dict(env)
    again["LD_PRELOAD"] = " ".join(filter(None, (path, env.get("LD_PRELOAD"))))
    again[_AGAIN] = "1"
    return again


def run_on_jemalloc(command: str = "serve") -> None:
    """Run this process again with jemalloc preloaded (never returns then) when it was
    started as ``roads COMMAND``; return at once when jemalloc is loaded already, was tried,
    is not wanted or is not on the machine, or when the command runs inside another program
    (click's test runner: starting that again would run it all again) or from a program
    read from stdin. ``COMMAND`` is the first argument: ``roads`` has no options before its
    subcommand. The preload is taken out of the environment again, so nothing the server
    starts has it; a start that fails leaves the process as it was, on glibc."""
    tried = os.environ.pop(_AGAIN, None) is not None
    if tried:
        preloaded = os.environ.get("LD_PRELOAD", "").split(" ", 1)
        if preloaded[0].endswith(LIBRARY):
            if len(preloaded) > 1:
                os.environ["LD_PRELOAD"] = preloaded[1]
            else:
                del os.environ["LD_PRELOAD"]
    if (tried or sys.argv[1:2] != [command] or os.environ.get(CHOICE) == "system"
            or sys.platform != "linux" or loaded() or "-" in sys.orig_argv[1:2]):
        return  # (a program read from stdin could not be read again)
    if (path := library()) is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, sys.orig_argv, preload_env(os.environ, path))
    except OSError:  # (the interpreter not startable again as it was: stay on glibc)
        return


def limit_arenas(arenas: int = ARENAS, mmap_threshold: int = MMAP_THRESHOLD,
                 trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Let the C heap keep at most ``arenas`` arenas and give blocks of ``mmap_threshold``
    bytes and more pages of their own; True where that took (glibc).

    glibc gives each new thread an arena of its own up to eight per core, and keeps what a
    thread frees in that thread's arena. A worker's ~40 request, drawing and SQLite threads
    then strand freed memory across 16 arenas: a soak's workers held free heap growing from
    2 to 20 MB in 8 minutes while their bytes in use stayed level (floor6). Two arenas is
    the usual bound for threaded servers; Python's own small objects do not use them.

    Two arenas alone left the creep as it was. glibc also raises its mmap threshold to the
    size of each mmapped block freed (up to 32 MB), so after one large block the screens'
    messages all come from the heap, and the ones that live on keep the freed ones' pages
    from going back. Set explicitly, the thresholds stay where they are put: in three
    side-by-side soaks the creep was 4-6 MB per 10 minutes less, not gone (soak7). Where
    jemalloc is installed the server runs on it instead (:mod:`dashboard.allocator`)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return all([bool(mallopt(_M_ARENA_MAX, arenas)),
                bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)),
                bool(mallopt(_M_TRIM_THRESHOLD, trim_threshold))])
