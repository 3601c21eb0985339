"""Numba's cache for this package's kernels: one place, keyed by module and content.

Numba finds this module through ``NUMBA_CACHE_LOCATOR_CLASSES`` (set by
:func:`roads.cache.configure`) the first time a kernel of this package is decorated with
``cache=True``. What a reinstall does, and why this locator exists:

- pip writes every file of a reinstall afresh, so each source file gets a new mtime; numba
  >= 0.68 stamps a cache by the file's SHA-256, so that alone does not invalidate it;
- but numba keeps the cache beside the source (``site-packages/roads/.../__pycache__``) or,
  when that is read-only, under ``~/.cache/numba`` in a folder named after the source's
  *absolute path*: a new virtualenv, a second clone or a read-only install compiled again.

:class:`KernelCacheLocator` stores every kernel under :func:`roads.cache.cache_dir` in a
folder named after its module (``numba/roads/board/``), whatever the install path, and stamps
it with the content of its module *and of the ``roads`` modules that module imports*
(numba freezes imported constants and inlines imported kernels, and by itself would not notice
them change). Kernels of other packages fall through to numba's own locators.

Importing this module also registers a compile listener: a process that has to compile one
of these kernels says so once on stderr instead of pausing silently, and loads the one
module of scipy that numba's kernel loading asks for without the rest of ``scipy.linalg``
(:func:`preload_cython_blas`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

from numba.core import event
from numba.core.caching import UserProvidedCacheLocator

import roads
from roads.cache import cache_dir

PACKAGE = Path(roads.__file__).resolve().parent
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(roads(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
    r"|import[ \t]+(roads(?:\.\w+)*))", re.MULTILINE)
#: Shown when a command must compile; ``roads prepare`` turns it off (it reports by itself).
COMPILING = ("roads: compiling kernels for first use, once (a few seconds, up to ~{seconds} s "
             "for ingest; `roads prepare` does it ahead of time)...\n")
COMPILE_SECONDS = 90  # the slowest group measured on a busy 2-core machine (ingest, 77 s)
announce = True


def _module_file(name: str, root: Path) -> Path | None:
    """The source file of module ``roads.x.y`` under ``root`` (the folder holding ``roads/``)."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(source: str, root: Path = PACKAGE.parent) -> set[Path]:
    """Files of the ``roads`` modules a source imports (``from roads.a import b`` counts
    ``roads.a`` and, when it is a module, ``roads.a.b``)."""
    found: set[Path] = set()
    for match in _IMPORT.finditer(source):
        module, names, plain = match.groups()
        candidates = [plain] if plain else [module]
        if names:
            for item in re.sub(r"#[^\n]*", "", names).strip("()\\ \n").split(","):
                name = item.split(" as ")[0].strip(" ()\\\n")
                if name.isidentifier():
                    candidates.append(f"{module}.{name}")
        found.update(f for c in candidates if (f := _module_file(c, root)) is not None)
    return found


@functools.cache
def source_stamp(py_file: Path, root: Path = PACKAGE.parent) -> str:
    """SHA-256 over a module's source and the sources of the ``roads`` modules it imports."""
    text = py_file.read_bytes()
    digest = hashlib.sha256(text)
    for dep in sorted(imported_modules(text.decode("utf-8"), root) - {py_file}):
        digest.update(dep.relative_to(root).as_posix().encode())
        digest.update(dep.read_bytes())
    return digest.hexdigest()


class KernelCacheLocator(UserProvidedCacheLocator):
    """Cache a kernel of this package under ``cache_dir()/numba/<its package path>``."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        relative = Path(py_file).resolve().relative_to(PACKAGE.parent)
        self._cache_path = str(cache_dir() / "numba" / relative.parent)

    def get_source_stamp(self) -> str:
        return source_stamp(Path(self._py_file).resolve())

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> KernelCacheLocator | None:
        path = Path(py_file).resolve()
        if not path.is_file() or not path.is_relative_to(PACKAGE):
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()  # type: ignore[no-untyped-call]
        except OSError:
            return None  # not writable: numba's own locators decide
        return self


class _CompileNotice(event.Listener):
    """Say once per process, on stderr, that a kernel of this package is being compiled."""

    said = False

    def on_start(self, ev: Any) -> None:
        if self.said or not announce:
            return
        module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
        if module == "roads" or module.startswith("roads."):
            self.said = True
            # Straight to the descriptor: shown even when sys.stderr is captured or redirected.
            os.write(2, COMPILING.format(seconds=COMPILE_SECONDS).encode())

    def on_end(self, ev: Any) -> None:
        pass


event.register("numba:compile", _CompileNotice())  # type: ignore[no-untyped-call]


_CYTHON_BLAS = "scipy.linalg.cython_blas"


def preload_cython_blas() -> None:
    """Load ``scipy.linalg.cython_blas`` alone, before numba asks for it.

    The first kernel a process loads (from the cache, too) initialises numba's CPU target,
    whose ``numba.np.arraymath`` checks at import that BLAS is there by importing this
    module, which runs the whole ``scipy.linalg`` package first (array-API layer,
    decompositions: ~0.15 CPU-s, 0.2-0.5 s on a busy machine, in every process). The module
    itself is a small extension that needs none of that, so it is loaded here from its file
    and registered under its name: numba's check and the BLAS functions its kernels call
    find it there. ``import scipy.linalg`` still runs the package in full when something
    asks for it. If anything is off (no such file, already loaded), numba imports it itself.
    """
    if _CYTHON_BLAS in sys.modules or "scipy.linalg" in sys.modules:
        return
    package = importlib.util.find_spec("scipy")  # (found, not imported)
    folders = package.submodule_search_locations if package is not None else None
    found = importlib.machinery.PathFinder.find_spec(
        "cython_blas", [os.path.join(f, "linalg") for f in folders or ()])
    if found is None or found.origin is None:
        return
    spec = importlib.util.spec_from_file_location(_CYTHON_BLAS, found.origin)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault(_CYTHON_BLAS, module)


preload_cython_blas()
