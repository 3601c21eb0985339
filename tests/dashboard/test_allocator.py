"""``roads serve`` starts itself again on jemalloc, once, and only when run as the command
(dashboard.allocator)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dashboard.allocator import LIBRARY, library, preload_env

# A child started as `python -c CHILD serve` (as `roads serve` is started): asks for the run
# on jemalloc, then says which allocator it has by the libraries mapped (an independent
# reading: /proc/self/maps, not the module's own `loaded`), how many times it ran (a file
# grows a line a run) and what it left in its environment.
CHILD = """
import json, os, sys
with open(sys.argv[2], "a") as runs:
    runs.write("run\\n")
from dashboard.allocator import run_on_jemalloc
run_on_jemalloc()
maps = open("/proc/self/maps").read()
print(json.dumps({"jemalloc": "libjemalloc" in maps, "runs": open(sys.argv[2]).read().count("run"),
                  "preload": os.environ.get("LD_PRELOAD"),
                  "again": "ROADS_SERVE_MALLOC_AGAIN" in os.environ}))
"""


def _child(tmp_path: object, command: str, **env: str) -> dict[str, object]:
    runs = os.path.join(str(tmp_path), f"runs-{command}-{len(env)}")
    environ = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "ROADS_SERVE_MALLOC")} | env
    done = subprocess.run([sys.executable, "-c", CHILD, command, runs], env=environ,
                          capture_output=True, text=True, timeout=120, check=True)
    return dict(json.loads(done.stdout))


needs_jemalloc = pytest.mark.skipif(
    library() is None or not sys.platform.startswith("linux"),
    reason=f"{LIBRARY} is not installed (Debian: libjemalloc2, .ci/system-packages venv)")


@needs_jemalloc
def test_serve_runs_again_once_on_jemalloc_and_leaves_no_preload(tmp_path: object) -> None:
    got = _child(tmp_path, "serve")
    assert got == {"jemalloc": True, "runs": 2, "preload": None, "again": False}


@needs_jemalloc
def test_a_preload_of_the_callers_own_is_kept(tmp_path: object) -> None:
    other = "/nonexistent/libother.so"  # ld.so says it cannot load it, and goes on
    got = _child(tmp_path, "serve", LD_PRELOAD=other)
    assert got["jemalloc"] is True and got["runs"] == 2 and got["preload"] == other


def test_the_system_allocator_when_asked_for(tmp_path: object) -> None:
    got = _child(tmp_path, "serve", ROADS_SERVE_MALLOC="system")
    assert got == {"jemalloc": False, "runs": 1, "preload": None, "again": False}


def test_not_run_again_inside_another_program(tmp_path: object) -> None:
    """Under click's test runner sys.argv is the runner's: starting it again would rerun it."""
    got = _child(tmp_path, "pytest")
    assert got == {"jemalloc": False, "runs": 1, "preload": None, "again": False}


def test_a_preload_that_did_not_take_is_not_tried_again(tmp_path: object) -> None:
    """A second start that still has no jemalloc (a broken library) serves on glibc."""
    got = _child(tmp_path, "serve", LD_PRELOAD="/nonexistent/" + LIBRARY,
                 ROADS_SERVE_MALLOC_AGAIN="1")
    assert got == {"jemalloc": False, "runs": 1, "preload": None, "again": False}


def test_preload_env_puts_jemalloc_first() -> None:
    env = preload_env({"LD_PRELOAD": "/x/liba.so", "HOME": "/h"}, "/lib/" + LIBRARY)
    assert env["LD_PRELOAD"] == f"/lib/{LIBRARY} /x/liba.so" and env["HOME"] == "/h"
    assert preload_env({}, "/lib/j.so")["LD_PRELOAD"] == "/lib/j.so"


def test_a_start_again_that_fails_stays_on_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    from dashboard import allocator

    def refused(*args: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sys, "argv", ["roads", "serve"])
    monkeypatch.setattr(sys, "orig_argv", ["python", "/x/roads", "serve"])
    monkeypatch.setattr(allocator, "library", lambda places=allocator.PLACES: "/x/libjemalloc.so.2")
    monkeypatch.setattr(allocator, "loaded", lambda: False)
    monkeypatch.delenv(allocator.CHOICE, raising=False)
    monkeypatch.setattr(os, "execve", refused)
    allocator.run_on_jemalloc()  # returns: the server goes on, on glibc
    calls: list[object] = []
    monkeypatch.setattr(os, "execve", lambda *a: calls.append(a))
    monkeypatch.setattr(sys, "orig_argv", ["python", "-", "serve"])
    allocator.run_on_jemalloc()  # a program read from stdin is not started again
    assert calls == []
