"""``roads serve --demo``'s first page (issue 18): what comes before the first fork leaves
no store file to the collector (the parent freezes its code without a full collection),
and a server answers its first pages before it loads the compiled kernels."""

from __future__ import annotations

import gc
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dashboard.workers import open_store_files
from roads.cli_live import _demo_store, _demo_users
from roads.store import Store


@contextmanager
def _no_collector() -> Iterator[None]:
    """A file closed only by a collection stays open in here."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_the_demo_s_store_and_users_close_their_files_themselves(tmp_path: Path) -> None:
    fresh, empty_real = tmp_path / "demo", tmp_path / "real"
    Store.create(empty_real).journal.close()
    with _no_collector():
        _demo_store(fresh)  # made
        _demo_store(fresh)  # the demo's own again
        _demo_store(empty_real)  # an empty store taken over
        assert _demo_users(fresh) and _demo_users(fresh)  # added, then new passwords
        assert open_store_files(fresh) == [] and open_store_files(empty_real) == []
    assert Store.open(empty_real).purpose == "demo"


BEFORE_FORK = textwrap.dedent("""
    import gc, sys
    from pathlib import Path
    from dashboard.workers import _before_fork, open_store_files
    from roads.store import Store

    root = Path(sys.argv[1])
    store = Store.create(root)  # its journal left open, in a cycle: only a collection closes it
    store.loop = store
    del store
    gc.freeze()  # as the parent does once the code is loaded
    assert open_store_files(root), "the test's store is not open"
    _before_fork(root)
    print(open_store_files(root), gc.get_freeze_count() > 0)
""")


def test_a_store_file_frozen_with_the_code_is_still_closed_before_the_fork(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", BEFORE_FORK, str(tmp_path / "s")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True"]


# The kernels' delay is the test's (argv[2]) so that a loaded machine cannot make the first
# pages outlast it; argv[3]: seconds to wait, after the pages (or the server's stop), for
# the kernels to load.
FIRST_PAGES = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from fastapi.testclient import TestClient
    import dashboard.app
    from dashboard.app import create_app

    dashboard.app.KERNELS_AFTER_SECONDS = float(sys.argv[2])
    app, _ = create_app(Path(sys.argv[1]))
    with TestClient(app.server) as client:  # the lifespan runs: the server has started
        pages = [client.get(p).status_code for p in ("/", "/table/T01", "/_dash-layout")]
        if sys.argv[4] == "running":
            deadline = time.monotonic() + float(sys.argv[3])
            # Both: a module is in sys.modules from the start of its import, before what
            # it imports (numba) is, so waiting for one alone could print mid-import.
            while not {"numba", "roads.board.machine"} <= sys.modules.keys() \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
    if sys.argv[4] == "stopped":
        time.sleep(float(sys.argv[3]))  # (past the delay: a timer not cancelled would fire)
    print(pages, "numba" in sys.modules, "roads.board.machine" in sys.modules)
""")


def _first_pages(tmp_path: Path, delay: float, wait: float, when: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", FIRST_PAGES, str(tmp_path / "s"),
                           str(delay), str(wait), when],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[200, 200, 200]"), done.stdout
    return done.stdout.split("]")[1].split()


def test_the_first_pages_are_served_before_the_kernels_load(tmp_path: Path) -> None:
    assert _first_pages(tmp_path, 600, 0, "running") == ["False", "False"]


def test_the_kernels_load_on_their_own_once_the_server_runs(tmp_path: Path) -> None:
    assert _first_pages(tmp_path, 0.2, 120, "running") == ["True", "True"]


def test_a_server_stopped_before_the_delay_never_loads_the_kernels(tmp_path: Path) -> None:
    assert _first_pages(tmp_path, 1.0, 2.0, "stopped") == ["False", "False"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_demo_answers_its_first_pages(tmp_path: Path) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", "from roads.cli import main; main()", "serve", "--demo",
         "--store", str(tmp_path / "demo"), "--port", str(port), "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, answers = time.monotonic() + 60, list[int]()
        while time.monotonic() < deadline and server.poll() is None and len(answers) < 2:
            try:
                for path in ("/", "/table/T01")[len(answers):]:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}",
                                                timeout=5) as r:
                        answers.append(r.status)
            except OSError:
                time.sleep(0.1)
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    assert answers == [200, 200], err
    assert "demo user dealer (dealer) password:" in out
    assert "store files open" not in err and "Traceback" not in err, err
