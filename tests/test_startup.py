"""Starting fast: one kernel cache that survives reinstalls, `roads prepare`, lazy imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roads
from roads import cache, kernel_cache, odds
from roads.odds_compiled import ways_kernel
from roads.prepare import StepFailed, prepare
from roads.prepare import roads as run_roads
from tests.floor import Floor

PACKAGE = Path(roads.__file__).resolve().parent
ROADS = str(Path(sys.executable).with_name("roads"))  # the installed console command

# ---------------------------------------------------------------- where the cache lives


def test_cache_dir_follows_the_variable_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    tag = f"{roads.__version__}-py{sys.version_info.major}.{sys.version_info.minor}"
    monkeypatch.setenv("ROADS_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ROADS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "baccarat-roads" / tag
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "baccarat-roads" / tag


def test_importing_roads_routes_its_kernels_to_the_locator() -> None:
    assert os.environ["NUMBA_CACHE_LOCATOR_CLASSES"].split(",")[0] == (
        "roads.kernel_cache.KernelCacheLocator")


# ---------------------------------------------------------------- what a kernel's stamp covers


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_imported_modules_finds_every_spelling_of_a_roads_import(tmp_path: Path) -> None:
    _tree(tmp_path, {"roads/__init__.py": "", "roads/cards.py": "", "roads/render/__init__.py": "",
                     "roads/render/themes.py": "", "roads/tableau.py": "", "roads/unused.py": ""})
    source = ("import numpy as np\nimport roads.cards\n"
              "from roads.render import themes as t, get_theme  # a comment\n"
              "def f():\n    from roads.tableau import (\n        BANKER_DRAWS,\n"
              "        PLAYER_DRAWS)\n")
    found = kernel_cache.imported_modules(source, tmp_path)
    assert {p.relative_to(tmp_path).as_posix() for p in found} == {
        "roads/cards.py", "roads/render/__init__.py", "roads/render/themes.py",
        "roads/tableau.py"}


def test_a_stamp_is_content_of_the_module_and_its_roads_imports(tmp_path: Path) -> None:
    _tree(tmp_path, {"roads/__init__.py": "", "roads/k.py": "from roads.tables import T\n",
                     "roads/tables.py": "T = 1\n", "roads/other.py": "X = 1\n"})
    kernel, dep, other = (tmp_path / "roads" / n for n in ("k.py", "tables.py", "other.py"))

    def stamp() -> str:
        kernel_cache.source_stamp.cache_clear()
        return kernel_cache.source_stamp(kernel, tmp_path)

    first = stamp()
    os.utime(kernel, (1_000_000, 1_000_000))  # what a reinstall does to the time
    assert stamp() == first
    other.write_text("X = 2\n")
    assert stamp() == first
    dep.write_text("T = 2\n")  # a constant the kernel freezes in changes
    changed = stamp()
    assert changed != first
    kernel.write_text(kernel.read_text() + "# edited\n")
    assert stamp() not in (first, changed)


# ---------------------------------------------------------------- the cache across "reinstalls"

COUNT_KERNELS = """
import json, sys
import roads
from roads.board import Board, compiled_machine
compiled_machine()
Board.from_outcomes("BBPPPBPBBTPBPPPPB")
from numba.core.registry import CPUDispatcher
compiled = loaded = 0
files = set()
for name, module in list(sys.modules.items()):
    if name == "roads" or name.startswith("roads."):
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                s = value.stats
                compiled += sum(s.cache_misses.values())
                loaded += sum(s.cache_hits.values())
                if s.cache_misses or s.cache_hits:
                    files.add(value.py_func.__code__.co_filename)
print(json.dumps({"package": roads.__file__, "compiled": compiled, "loaded": loaded,
                  "files": sorted(files)}))
"""


def _install(dest: Path) -> Path:
    """A copy of the package as pip would write it: same content, every file's time new."""
    shutil.copytree(PACKAGE, dest / "roads", copy_function=shutil.copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _count(site: Path, cache_root: Path, cwd: Path) -> tuple[dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env |= {"PYTHONPATH": str(site), "ROADS_CACHE_DIR": str(cache_root)}
    done = subprocess.run([sys.executable, "-c", COUNT_KERNELS], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert result["package"].startswith(str(site))  # the copy ran, not the checkout
    return result, done.stderr


def test_compiled_kernels_survive_a_touch_and_a_copy_and_follow_an_edit(tmp_path: Path) -> None:
    cache_root = tmp_path / "cache"
    first = _install(tmp_path / "site-a")
    cold, said = _count(first, cache_root, tmp_path)
    assert cold["compiled"] > 0 and cold["loaded"] == 0
    assert "compiling kernels for first use" in said  # not a silent pause
    kernel_file = Path(cold["files"][0])
    assert (cache_root / "numba" / "roads").is_dir()

    for path in (first / "roads").rglob("*.py"):  # pip rewrites every file on a reinstall
        os.utime(path, (2_000_000_000, 2_000_000_000))
    touched, said = _count(first, cache_root, tmp_path)
    assert touched["compiled"] == 0 and touched["loaded"] > 0 and said == ""

    second = _install(tmp_path / "site-b")  # another virtualenv, another path
    copied, said = _count(second, cache_root, tmp_path)
    assert copied["compiled"] == 0 and copied["loaded"] == touched["loaded"] and said == ""

    edited = second / kernel_file.relative_to(first)
    edited.write_text(edited.read_text() + "\n# an edit changes what was compiled\n")
    recompiled, said = _count(second, cache_root, tmp_path)
    assert recompiled["compiled"] > 0 and "compiling kernels" in said


# ---------------------------------------------------------------- roads prepare


def _roads(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ROADS, *args], capture_output=True, text=True, env=env, check=False)


def test_prepare_reports_every_step_and_exits_0() -> None:
    done = _roads("prepare")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"kernels ready in {cache.cache_dir()}: ")
    lines = done.stderr.splitlines()
    assert lines[0] == f"preparing kernels in {cache.cache_dir()}"
    assert [line.split()[0] for line in lines[1:]] == [
        "exact", "simulation", "roads", "ingest", "statistics", "batch", "live"]
    again = _roads("prepare", "--quiet")  # everything is in the cache now
    assert again.returncode == 0 and again.stderr == ""
    assert ": 0 compiled, " in again.stdout


def test_prepare_refuses_an_unwritable_cache_with_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    done = _roads("prepare", env=os.environ | {"ROADS_CACHE_DIR": str(blocker / "cache")})
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert str(blocker / "cache") in done.stderr and "ROADS_CACHE_DIR" in done.stderr


def test_a_failing_step_names_the_command_and_its_error() -> None:
    with pytest.raises(StepFailed, match=r"`roads odds --rules nope` exited 2: .*unknown rule"):
        prepare(steps=[("broken", lambda _work: run_roads("odds", "--rules", "nope"))])
    with pytest.raises(StepFailed, match=r"^crash: ZeroDivisionError"):
        prepare(steps=[("crash", lambda _work: print(1 / 0))])


# ---------------------------------------------------------------- commands load what they use

LOADED = """
import sys
from roads.cli import _invoke
code = _invoke(sys.argv[1:])
heavy = [m for m in ("numba", "polars", "pyarrow", "scipy", "dash", "pandas", "pydantic")
         if m in sys.modules]
print("LOADED", code, *heavy)
"""


@pytest.mark.parametrize("args", [["odds", "--json"], ["odds", "--decks", "6", "--effects"],
                                  ["rules"], ["rules", "casino-6"], ["--help"]])
def test_light_commands_do_not_load_numba_or_the_data_stack(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines()[-1] == "LOADED 0"


def test_store_verify_loads_neither_numba_nor_pandas(tmp_path: Path) -> None:
    """A verify of sealed shoes digests them with numpy (numba is for 200,000 coups and
    more) and reads Arrow buffers itself (pyarrow's ``to_numpy`` would import pandas)."""
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPPBTBBP")
    floor.close("T1")
    floor.store.journal.close()
    done = subprocess.run([sys.executable, "-c", LOADED, "store", "verify", "--store",
                           str(tmp_path / "store"), "--quiet"], capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines()[-1] == "LOADED 0 polars pyarrow"
    assert "1 sealed shoes checked" in done.stdout


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=64), min_size=10, max_size=10)
       .filter(lambda v: sum(v) >= 6))
def test_the_numpy_sum_equals_the_compiled_kernel(values: list[int]) -> None:
    g = odds._groups()
    counts = np.array(values, dtype=np.int64)
    float_ok = odds.falling(sum(values), 6) < 2**53
    dtype = np.float64 if float_ok else np.int64
    coefs = g.coefs_t_f64 if float_ok else g.coefs_t
    compiled = np.empty(len(odds.STATS), dtype=dtype)
    ways_kernel(counts, g.factor_index, coefs, compiled)
    assert odds._ways_numpy(counts.astype(dtype), g, coefs).tolist() == compiled.tolist()


def test_the_group_table_is_read_back_from_the_cache(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("ROADS_CACHE_DIR", str(tmp_path))
    odds._groups.cache_clear()
    try:
        computed = odds._groups()
        saved = list(tmp_path.glob("odds-groups-*.npz"))
        assert len(saved) == 1
        odds._groups.cache_clear()
        loaded = odds._groups()
        assert np.array_equal(loaded.coefs_t, computed.coefs_t)
        assert np.array_equal(loaded.factor_index, computed.factor_index)
        saved[0].write_bytes(b"torn")  # a damaged file is computed again, not trusted
        odds._groups.cache_clear()
        assert np.array_equal(odds._groups().coefs_t, computed.coefs_t)
    finally:
        odds._groups.cache_clear()


# ---------------------------------------------------------------- a closed standard output


def test_a_closed_stdout_ends_quietly_like_coreutils() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        proc = subprocess.run([ROADS, "odds"], stdout=write, stderr=subprocess.PIPE, text=True,
                              check=False)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == ""


# ---------------------------------------------------------------- what a kernel load imports

KERNEL_LOAD = """
import sys
import numba
import numpy as np
from roads.board import Board, compiled_machine
compiled_machine()
Board.from_outcomes("BBPPPBPBBTPB")
from numba.np import arraymath
print("BLAS", arraymath._HAVE_BLAS, "LINALG", "scipy.linalg" in sys.modules)
dot = numba.njit(lambda a, b: np.dot(a, b))
print("DOT", dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
import scipy.linalg
print("SOLVE", float(scipy.linalg.solve([[2.0]], [4.0])[0]))
"""


def test_loading_kernels_leaves_scipy_linalg_out_and_blas_working() -> None:
    """numba's BLAS check finds ``scipy.linalg.cython_blas`` loaded alone (without running
    ``scipy.linalg``); a kernel calling BLAS and ``scipy.linalg`` itself still work."""
    done = subprocess.run([sys.executable, "-c", KERNEL_LOAD], capture_output=True,
                          text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[-3:] == ["BLAS True LINALG False", "DOT 11.0", "SOLVE 2.0"]
