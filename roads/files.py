"""Files that appear whole or not at all, and their digests — one place for both.

Every output (Parquet parts, reports, quarantine, bundles, notes) is written under a hidden
temporary name in its final directory, fsynced, renamed into place, and the directory
fsynced, so a reader never sees half a file and a crash leaves only a ``.tmp-`` file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def sha256(path: Path) -> str:
    """A file's SHA-256, the one way the codebase takes it (``file_digest`` reads into one
    buffer it reuses: no fresh pages a block, and no GIL held while it hashes)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def temporary_name(path: Path) -> Path:
    """A hidden, unique name beside ``path`` (readers skip it)."""
    return path.parent / f".tmp-{os.urandom(16).hex()}-{path.name}"


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_all(paths: Iterable[Path]) -> None:
    """Make files already in place durable, and their directories: many at once, since each
    fsync mostly waits on the disk (a run writing fifty parts one fsync at a time would wait
    for each in turn)."""
    files = list(paths)
    if not files:
        return
    with ThreadPoolExecutor(max_workers=min(8, len(files))) as pool:
        list(pool.map(_fsync_file, files))
        list(pool.map(fsync_dir, sorted({p.parent for p in files})))


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def commit(tmp: Path, path: Path) -> None:
    """Make a fully written temporary file durable and give it its final name."""
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def publish(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` the content, then publish it atomically as ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        write(tmp)
        commit(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def publish_text(path: Path, text: str) -> None:
    publish(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
