"""``roads serve`` on every core: worker processes sharing one listening socket and the store.

A Python process serves on one core at a time, so the server forks ``workers`` processes
that each run the whole application (uvicorn on the same socket: the kernel hands each new
connection to one of them). They share nothing but the store: each opens its own
connections, keeps its own read model of the tables its screens show and watches the
journal; a screen gets the same states whichever worker serves it. The simulated dealers of
``--demo`` run in a process of their own.

The parent loads the code once and seals what a crash left closed but unsealed, then forks
the first worker, which serves the first pages at once; then it loads the compiled kernels
(~1.4 s of CPU, which the first page waited for when they came before any fork) and forks
the other workers, which share them (the first loads its own on a thread, as it serves). It
then only supervises: it holds no thread and no database connection, so it can fork a
replacement for a worker that dies (with the kernels shared). SIGTERM or SIGINT stops every
process.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dashboard.config import SiteConfig

#: Seconds to wait for the processes to stop before killing them.
STOP_SECONDS = 10.0
#: How long a thread may hold the GIL while another waits for it. The event loop gives it up
#: at every socket read and write and must then wait for the drawing, request and journal
#: threads; at Python's 5 ms, hundreds of sends a second queued behind them (the convoy
#: effect): a floor's screens lagged seconds behind while the worker's cores sat half idle.
SWITCH_SECONDS = 0.001
#: A process that dies sooner than this after its start is restarted no faster than this.
RESTART_SECONDS = 1.0


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def open_store_files(root: Path) -> list[str]:
    """Files under the store this process holds open (none may be before a fork: SQLite
    connections must not cross one)."""
    found, inside = [], str(root.resolve())
    with contextlib.suppress(FileNotFoundError):
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                # under the store's folder, not beside it (/srv/store.log is not /srv/store)
                if target == inside or target.startswith(inside.rstrip(os.sep) + os.sep):
                    found.append(target)
    return found


def _prepare(root: Path) -> None:
    """Load the server's code, once for every worker, and seal what a crash left unsealed.

    The loaded code's objects go out of the collector's reach at once (``gc.freeze``), so
    the collection before each fork scans only what came after: a full one scanned every
    module's objects (~0.07 s of CPU, all of it before the first page). What was made
    before and holds a store file must be closed, not left to the collector."""
    import dashboard.app  # noqa: F401
    from roads.tables import open_service

    gc.freeze()

    service = open_service(root)
    service.recover()
    service.journal.close()


def _before_fork(root: Path) -> None:
    """What a fork needs: no store file open (SQLite connections must not cross one), and
    the loaded code's objects out of the collector's reach (a worker's collections would
    otherwise write to every one of them and copy the pages it shares with the parent)."""
    gc.collect()  # the preparation's connections close here (what is not yet frozen)
    if open_store_files(root):  # one made before the freeze and left to the collector
        gc.unfreeze()
        gc.collect()
    if (held := open_store_files(root)):
        raise RuntimeError(f"store files open before forking the workers: {held}")
    gc.freeze()


def _run_worker(sock: socket.socket, root: Path, site: SiteConfig, registry: Path) -> None:
    import uvicorn

    from dashboard.app import create_app
    from dashboard.limits import server_options
    from dashboard.memprobe import start as probe_memory
    probe_memory()  # only when ROADS_MEMPROBE asks (the soak benchmark)
    app, _ = create_app(root, site, create=False, recover=False, registry=registry)
    # The application's objects (routes, models, layout) live as long as the worker: out of
    # the collector's reach too, so each full collection scans only what serving made.
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(SWITCH_SECONDS)
    config = uvicorn.Config(app.server, log_level="warning", **server_options(site.limits))
    uvicorn.Server(config).run(sockets=[sock])


def wait_until_served(sock: socket.socket, seconds: float = 30.0) -> bool:
    """Whether a worker answered ``/health`` on the server's socket within ``seconds``. (A
    connection alone says nothing: the kernel accepts it before any worker does.)"""
    import http.client

    host, port = sock.getsockname()[:2]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        connection = http.client.HTTPConnection(host, port, timeout=max(0.1, seconds / 10))
        try:
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return True
        except (OSError, http.client.HTTPException):
            pass
        finally:
            connection.close()
        time.sleep(0.05)
    return False


def _run_demo(sock: socket.socket, root: Path, tables: list[str], pace: float) -> None:
    from dashboard.demo import start_demo
    from roads.tables import open_service

    # The dealers start once a worker serves: loading the engine (numba, ~1 s) beside the
    # workers' start would only make the first page later, and nothing is dealt unseen.
    wait_until_served(sock)

    stop = start_demo(open_service(root), tables, pace)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1.0):
        pass
    time.sleep(0.2)  # a coup being entered finishes its transaction


#: prctl(2) option: the signal a process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def _end_with_parent(parent: int) -> None:
    """Make this (forked) process get SIGTERM when the server dies, however it dies: a
    killed server cannot stop its workers, which would go on holding the port and the
    store. Where prctl is missing (not Linux), the server's own stop still ends them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the server died before the prctl took effect
        os._exit(0)


def _fork(job: Callable[[], None]) -> int:
    sys.stdout.flush()  # or the child would print the parent's buffered lines again
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _end_with_parent(parent)
        job()
    except BaseException as exc:  # the worker's own error: say it, then leave
        if not isinstance(exc, KeyboardInterrupt | SystemExit):
            print(f"roads serve: worker {os.getpid()}: {exc!r}", file=sys.stderr, flush=True)
            code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(root: Path, site: SiteConfig, host: str, port: int, workers: int,
          demo: tuple[list[str], float] | None = None) -> None:
    """Serve until SIGTERM/SIGINT: ``workers`` processes, and the demo's dealers when
    ``demo`` gives their tables and pace."""
    sock = listen(host, port)
    shared = Path(tempfile.mkdtemp(prefix="roads-serve-"))
    registry = shared / "screens.sqlite"
    _prepare(root)
    _before_fork(root)
    jobs: dict[str, Callable[[], None]] = {
        f"worker {i + 1}": (lambda: _run_worker(sock, root, site, registry))
        for i in range(workers)}
    if demo is not None:
        jobs["demo"] = lambda: _run_demo(sock, root, *demo)
    running: dict[int, tuple[str, float]] = {}
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        for i, (name, job) in enumerate(jobs.items()):
            if stopping:  # stopped while the kernels loaded: fork no more
                break
            running[_fork(job)] = (name, time.monotonic())
            if i == 0:  # the first worker serves; the others share the kernels
                from dashboard.app import warm_up

                warm_up()
                _before_fork(root)
        deadline = None
        while running:
            if stopping and deadline is None:
                deadline = time.monotonic() + STOP_SECONDS
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                if deadline is not None and time.monotonic() > deadline:
                    for pid in running:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                time.sleep(0.05)
                continue
            name, started = running.pop(pid)
            if stopping:
                continue
            print(f"roads serve: {name} (pid {pid}) ended ({_status(status)}); restarting",
                  file=sys.stderr, flush=True)
            time.sleep(max(0.0, started + RESTART_SECONDS - time.monotonic()))
            running[_fork(jobs[name])] = (name, time.monotonic())
    finally:
        stop()
        sock.close()
        shutil.rmtree(shared, ignore_errors=True)


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.waitstatus_to_exitcode(status)}"
