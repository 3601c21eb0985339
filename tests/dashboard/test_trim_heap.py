"""A worker gives the C heap's free pages back to the system: memory freed among live blocks
(what a soak's request and drawing threads leave behind) no longer counts in its RSS."""

from __future__ import annotations

import ctypes
import threading
import time

import pytest

from dashboard.workers import trim_heap

BLOCK = 16 << 10  # under glibc's mmap threshold: from the heap itself
BLOCKS = 4096  # 64 MiB


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def _fragment(libc: ctypes.CDLL) -> list[int]:
    """Allocate and touch 64 MiB of blocks, free fifteen of every sixteen: the freed pages
    lie between live blocks, where glibc cannot shrink the heap by itself."""
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = [libc.malloc(BLOCK) for _ in range(BLOCKS)]
    for b in blocks:
        ctypes.memset(b, 1, BLOCK)
    for i, b in enumerate(blocks):
        if i % 16:
            libc.free(b)
    return [b for i, b in enumerate(blocks) if i % 16 == 0]


def test_free_pages_between_live_blocks_leave_the_rss() -> None:
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        pytest.skip("no glibc: trim_heap does nothing here (and says so)")
    kept = _fragment(libc)
    try:
        before = _rss_bytes()
        stop = threading.Event()
        trimmer = threading.Thread(target=trim_heap, args=(stop, 0.05))
        trimmer.start()
        time.sleep(0.5)  # several rounds
        stop.set()
        trimmer.join(timeout=5)
        after = _rss_bytes()
    finally:
        for b in kept:
            libc.free(b)
    assert not trimmer.is_alive()  # the stop event ends it
    freed = BLOCK * BLOCKS * 15 // 16
    assert before - after > freed // 2, (before, after)
