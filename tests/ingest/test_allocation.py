"""`roads ingest` sets polars' allocator option before polars loads (jemalloc reads it once)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roads.ingest.allocation import SETTING, VARIABLE, keep_freed_pages


def test_the_cli_loads_polars_only_after_ingest_sets_its_allocator_option(
        tmp_path: Path) -> None:
    """An import hook records the variable at the moment polars is imported; the ingest
    itself runs to the end (its coups stored)."""
    source = tmp_path / "coups.csv"
    source.write_text("table,shoe,coup,player_cards,banker_cards\nT1,S1,1,9h Kd,5s 2c\n")
    store = tmp_path / "store"
    script = ("import os, sys\n"
              "seen = []\n"
              "class Hook:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'polars' and not seen:\n"
              f"            seen.append(os.environ.get({VARIABLE!r}))\n"
              "        return None\n"
              "sys.meta_path.insert(0, Hook())\n"
              f"os.environ.pop({VARIABLE!r}, None)\n"
              "import roads.cli\n"
              "assert not seen, 'the CLI imports polars at start'\n"
              f"roads.cli.main(['ingest', {str(source)!r}, '--store', {str(store)!r}],\n"
              "              standalone_mode=False)\n"
              "print(seen[0])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != VARIABLE})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == SETTING
    from roads.store import Store
    assert Store.open(store).read.coups().height == 1


def test_a_setting_the_environment_holds_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VARIABLE, "dirty_decay_ms:1000")
    keep_freed_pages()
    assert os.environ[VARIABLE] == "dirty_decay_ms:1000"
    monkeypatch.delenv(VARIABLE)
    keep_freed_pages()
    assert os.environ[VARIABLE] == SETTING
