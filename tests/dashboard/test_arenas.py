"""The server's C heap keeps few arenas however many threads it runs (dashboard.allocator)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# A child process: optionally limit the arenas, run threads that each allocate from the C
# heap (large bytes objects bypass Python's own allocator), then count glibc's arenas in
# malloc_info's report.
CHILD = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from dashboard.allocator import limit_arenas
    if sys.argv[1] == "limit":
        assert limit_arenas(2)
    barrier = threading.Barrier(8)
    def work():
        held = [bytes(200_000) for _ in range(4)]
        barrier.wait()
        del held
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    path = os.path.join(tempfile.mkdtemp(), "heap.xml")
    out = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, out)
    libc.fclose(out)
    print(open(path).read().count("<heap nr="))
""")


def _arenas(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout.strip())


def test_the_limit_bounds_the_arenas_many_threads_would_make() -> None:
    unlimited, limited = _arenas("free"), _arenas("limit")
    assert unlimited > 2  # the threads do make arenas of their own without the limit
    assert limited <= 2
