"""What `roads stats` loads ahead of its reads, and the constant written out for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scipy.special import ndtri

from roads.stats.partials import Z99, wilson
from roads.store import Store


def test_the_written_out_99_5_percent_quantile_is_scipys() -> None:
    assert float(ndtri(0.995)) == Z99
    low, high = wilson(50, 100)
    assert 0.37 < low < 0.38 and 0.62 < high < 0.63  # the 99% interval of 50 in 100


def test_loading_ahead_loads_the_passes_and_scipy_and_importing_the_statistics_does_not(
) -> None:
    script = (
        "import sys\n"
        "import roads.analysis\n"
        "assert 'scipy.special' not in sys.modules, 'scipy.special imported with the stats'\n"
        "from roads.stats.ahead import load_ahead\n"
        "from roads.stats.integrity import _checks_pass\n"
        "from roads.stats.partials import _statistics_pass\n"
        "assert not _checks_pass.overloads and not _statistics_pass.overloads\n"
        "load_ahead().join()\n"
        "assert 'scipy.special' in sys.modules\n"
        "assert _checks_pass.overloads and _statistics_pass.overloads\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_cli_loads_pyarrow_only_after_stats_sets_its_allocator_option(
        tmp_path: Path) -> None:
    """`roads stats` and `check` set MIMALLOC_PURGE_DELAY before pyarrow loads (it is read
    once, then): an import hook records the variable at the moment pyarrow is imported."""
    Store.create(tmp_path / "store").journal.close()
    script = ("import os, sys\n"
              "seen = []\n"
              "class Hook:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'pyarrow' and not seen:\n"
              "            seen.append(os.environ.get('MIMALLOC_PURGE_DELAY'))\n"
              "        return None\n"
              "sys.meta_path.insert(0, Hook())\n"
              "import roads.cli\n"
              "assert not seen, 'the CLI imports pyarrow at start'\n"
              "os.environ.pop('MIMALLOC_PURGE_DELAY', None)\n"
              f"roads.cli._slice_report(__import__('pathlib').Path({str(tmp_path / 'store')!r}),"
              "\n                        None, None, None, None, 0.99)\n"
              "assert seen == ['-1'], seen\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
