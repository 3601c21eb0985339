"""The board machine of :mod:`roads.board.machine` run as plain Python, without numba.

A command that draws one short shoe (``roads board BBPPPBPBB``) would spend a second
importing numba and loading the machine's compiled kernels from the cache for a
microsecond's work. This module runs *the same source file* as ordinary Python instead: it
loads ``machine.py`` a second time, under another module name, with ``numba.njit`` standing
for "no compilation" (each decorated function stays the Python function it was written as)
and ``numba.prange`` for ``range``. There is no second implementation to keep in step; the
states both write are the same flat arrays, so a board can move from one to the other
between calls. The tests hold the two equal on random shoes (``tests/test_board_plain.py``).

It is over a thousand times slower per coup than the compiled machine (~0.4 ms a coup with
the JSON contract): :mod:`roads.board.board` uses it only until a process has run a
thousand coups through it.
"""

from __future__ import annotations

import builtins
import functools
import importlib.machinery
import importlib.util
import types
from pathlib import Path
from typing import Any

NAME = "roads.board.plain_machine"
"""The module name the plain copy is loaded under (``roads.board.machine`` stays the
compiled one)."""


def _njit(*args: Any, **_options: Any) -> Any:
    """``numba.njit`` that compiles nothing: ``@njit`` and ``@njit(options)`` alike."""
    if len(args) == 1 and callable(args[0]):
        return args[0]
    return lambda function: function


_NO_NUMBA = types.SimpleNamespace(njit=_njit, prange=range)


def _import(name: str, globals: Any = None, locals: Any = None,
            fromlist: Any = (), level: int = 0) -> Any:
    """``__import__`` for the plain copy: ``import numba`` gives :data:`_NO_NUMBA`."""
    if name == "numba" and level == 0:
        return _NO_NUMBA
    return builtins.__import__(name, globals, locals, fromlist, level)


class _Loader(importlib.machinery.SourceFileLoader):
    """Runs ``machine.py`` (its cached bytecode, like any import) with the import hook in
    the module's own builtins: nothing outside this one module sees the stand-in."""

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = {**vars(builtins), "__import__": _import}
        super().exec_module(module)


@functools.cache
def machine() -> types.ModuleType:
    """The plain copy of the machine module (loaded once; not put in ``sys.modules``)."""
    path = Path(__file__).with_name("machine.py")
    loader = _Loader(NAME, str(path))
    spec = importlib.util.spec_from_file_location(NAME, path, loader=loader)
    if spec is None:  # pragma: no cover - the file is part of the package
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


__all__ = ["NAME", "machine"]
