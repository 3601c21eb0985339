"""``roads serve`` on jemalloc where the machine has it (Debian's ``libjemalloc2``).

A soak's workers kept what glibc's heap freed among blocks that live on: their memory rose
all run long while their bytes in use stayed level (floor6). jemalloc keeps blocks of one
size class together and gives pages that empty back after a few seconds, so freed memory
does not stay stranded (soak7). The workers are forked, so the allocator must be in the
server's process before it starts: ``roads serve`` runs itself again with jemalloc
preloaded, once, before it has done anything else. Without the library, or with
``ROADS_SERVE_MALLOC=system``, it keeps glibc's (whose arenas and thresholds
:func:`dashboard.workers.limit_arenas` sets).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

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
    (click's test runner: starting that again would run it all again). The preload is taken
    out of the environment again, so nothing the server starts has it."""
    tried = os.environ.pop(_AGAIN, None) is not None
    if tried:
        preloaded = os.environ.get("LD_PRELOAD", "").split(" ", 1)
        if preloaded[0].endswith(LIBRARY):
            if len(preloaded) > 1:
                os.environ["LD_PRELOAD"] = preloaded[1]
            else:
                del os.environ["LD_PRELOAD"]
    if (tried or sys.argv[1:2] != [command] or os.environ.get(CHOICE) == "system"
            or sys.platform != "linux" or loaded()):
        return
    if (path := library()) is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, preload_env(os.environ, path))
