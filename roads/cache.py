"""Where Baccarat Roads keeps what it computes once: compiled kernels and precomputed tables.

One directory, chosen once per process:

1. ``$ROADS_CACHE_DIR`` when set (the Makefile points it inside the repository);
2. else ``$XDG_CACHE_HOME/baccarat-roads/<version>-py<major.minor>/``;
3. else ``~/.cache/baccarat-roads/<version>-py<major.minor>/``.

Numba's own default puts each kernel's cache beside its source file (or, when that is not
writable, under ``~/.cache/numba`` keyed by the file's absolute path), so every new
virtualenv or clone compiled everything again. :func:`configure` (run by ``import roads``)
hands the kernels of this package to :class:`roads.kernel_cache.KernelCacheLocator`, which
keys them by module name and source content instead of path and time. This module imports
nothing heavy: it runs on every ``roads`` start, including the ones that never compile.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from roads import __version__

ENV = "ROADS_CACHE_DIR"
#: Numba tries these in order; ours first, then numba's own defaults for everyone else's code.
LOCATORS = ("roads.kernel_cache.KernelCacheLocator", "UserProvidedCacheLocator",
            "InTreeCacheLocator", "UserWideCacheLocator", "IPythonCacheLocator",
            "ZipCacheLocator")
_NUMBA_ENV = "NUMBA_CACHE_LOCATOR_CLASSES"


def cache_dir() -> Path:
    """The cache directory of this version on this Python (not created here)."""
    explicit = os.environ.get(ENV)
    if explicit:
        return Path(explicit).expanduser().absolute()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    tag = f"{__version__}-py{sys.version_info.major}.{sys.version_info.minor}"
    return Path(base).expanduser().absolute() / "baccarat-roads" / tag


def configure() -> None:
    """Route this package's numba kernels to :func:`cache_dir` (before any is decorated).

    Numba reads its locator list when it is imported, so the setting goes into the
    environment; if numba is already loaded, into its live configuration as well. A list the
    user set is left alone.
    """
    if os.environ.get(_NUMBA_ENV):
        return
    os.environ[_NUMBA_ENV] = ",".join(LOCATORS)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.config.CACHE_LOCATOR_CLASSES = os.environ[_NUMBA_ENV]


def save_arrays(path: Path, **arrays: object) -> None:
    """Keep precomputed arrays in the cache (``.npz``), whole or not at all: written under
    a temporary name, then renamed (a reader never sees half a table)."""
    import uuid

    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{uuid.uuid4().hex}-{path.name}"
    try:
        with tmp.open("wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
