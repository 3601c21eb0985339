"""README's command list runs as written.

Every line of the list is run in order, from a fresh directory holding a copy of
``data/samples/``, with the ``roads`` of this environment first on ``PATH``; each must exit
with the code README states (``[exit N]`` in its comment, else 0). ``roads serve`` lines are
started, must answer ``/health``, and are stopped; they get a free ``--port`` appended
(click takes the last value), since the default port may be taken on a shared machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from roads.store import Store

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## The `roads` command"


@dataclass(frozen=True)
class Line:
    """One command of the list and its comment (continuation lines included)."""

    command: str
    comment: str

    @property
    def expected(self) -> int:
        found = re.search(r"\[exit (\d+)\]", self.comment)
        return int(found.group(1)) if found else 0

    def option(self, name: str) -> str | None:
        found = re.search(rf"{name} (\S+)", self.command)
        return found.group(1) if found else None


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start:end if end > 0 else None]


def readme_commands() -> list[Line]:
    """The ``sh`` block of README's command section, one :class:`Line` per command."""
    found = re.search(r"```sh\n(.*?)```", _section(), re.S)
    assert found, "README's command section has no sh block"
    lines: list[Line] = []
    for raw in found.group(1).splitlines():
        if not raw.strip():
            continue
        if raw.lstrip().startswith("#"):  # a comment continued under its command
            lines[-1] = Line(lines[-1].command, f"{lines[-1].comment} {raw.strip()[1:]}")
            continue
        split = re.search(r"\s+#\s", raw)
        command, comment = (raw[:split.start()], raw[split.end():]) if split else (raw, "")
        lines.append(Line(command.strip(), comment.strip()))
    return lines


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(line: Line, cwd: Path, env: dict[str, str]) -> None:
    """Start a ``roads serve`` line, wait for ``/health``, stop it with Ctrl-C."""
    port = _free_port()
    proc = subprocess.Popen(["bash", "-c", f"exec {line.command} --port {port}"], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (line.command, proc.communicate())
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{line.command}: no answer on /health"
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert b"Dashboard: http://" in out, (out, err)
    assert proc.returncode == line.expected, (line.command, proc.returncode, err[-2000:])


def test_the_list_names_every_command() -> None:
    commands = {line.command.split("|")[-1].split()[1] for line in readme_commands()
                if "roads" in line.command}
    listed = subprocess.run([sys.executable, "-m", "roads.cli", "--help"], capture_output=True,
                            text=True, check=True).stdout
    listing = listed.split("Commands:")[1].split("\n\n")[0]  # (the exit codes follow it)
    known = set(re.findall(r"^  (\w+)\s", listing, re.M))
    assert len(known) > 10 and known <= commands, sorted(known - commands)


def test_the_custom_rule_set_shown_is_the_sample_file() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```toml\n(.*?)```", text, re.S)
    assert shown is not None
    assert shown.group(1) == (ROOT / "data" / "samples" / "club-6.toml").read_text()


def test_every_command_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "data" / "samples", tmp_path / "data" / "samples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                 f"{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    lines = readme_commands()
    assert len(lines) > 40 and any(line.expected for line in lines)
    for line in lines:
        if line.command.startswith("roads serve"):
            _serve(line, tmp_path, env)
            continue
        done = subprocess.run(["bash", "-c", line.command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == line.expected, (line.command, done.stdout[-2000:],
                                                  done.stderr[-2000:])
        if done.returncode == 2:  # bad input: one line naming what is wrong
            assert re.fullmatch(r"roads: error: .+\n", done.stderr), done.stderr
    # The ids README names are the ones the sample data and the seed made.
    store = Store.open(tmp_path / "data" / "store")
    shoes = set(store.read.shoes().select("table_id", "shoe_id").iter_rows())
    named = {(line.option("--table"), line.option("--shoe")) for line in lines
             if "--store data/store" in line.command and line.option("--shoe")}
    assert named and named <= shoes
    tables = {t for t, _ in shoes}
    assert {line.option("--table") for line in lines if line.command.startswith(
        ("roads stats", "roads audit"))} <= tables


@pytest.mark.parametrize("name", ["dirty.csv", "unknown-headers.csv"])
def test_what_readme_says_of_a_sample_is_what_ingest_reports(tmp_path: Path,
                                                             name: str) -> None:
    """The comments of the two ingest lines that describe a file's problems hold."""
    line = next(line for line in readme_commands()
                if f"ingest data/samples/{name}" in line.command and "--replace" not in
                line.command)
    done = subprocess.run([sys.executable, "-m", "roads.cli", "ingest",
                           str(ROOT / "data" / "samples" / name), "--store",
                           str(tmp_path / "store"), "--json"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == line.expected
    report = json.loads(done.stdout)["files"][0]
    if name == "dirty.csv":
        assert "4 rows quarantined" in line.comment and report["quarantined"] == 4
        assert "1 stored and flagged" in line.comment and report["flagged"] == 1
        assert report["ignored_columns"] == ["荷官"] and "荷官" in line.comment
    else:
        assert report["warnings"] and "stored outcome-only" in report["warnings"][0]
        assert all(c in line.comment for c in report["ignored_columns"])
