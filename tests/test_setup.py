"""`.ci/system-packages`: what `make test` installs on a bare machine, and how it waits for apt.

apt itself cannot run in a test, so each test puts a recording ``apt-get`` (and only the tools
the script uses) on PATH and runs the real script against it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "system-packages"
BROWSERS = ("chromium chromium-driver fonts-noto-cjk fonts-noto-core fonts-dejavu-core "
            "poppler-utils")

FAKE_APT = """#!/bin/bash
echo "$*" >> "$APT_LOG"
if [ "$2" != "${2#DPkg::Lock::Timeout=}" ] && [ "$3" = update ]; then
    failures=$(cat "$APT_LOG.failures" 2>/dev/null || echo 0)
    if [ "$failures" -lt "${APT_FAIL_UPDATES:-0}" ]; then
        echo $((failures + 1)) > "$APT_LOG.failures"
        echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" >&2
        exit 100
    fi
fi
exit 0
"""


def _bin(tmp_path: Path, present: tuple[str, ...] = ()) -> Path:
    """A PATH with the script's tools, a recording apt-get and the ``present`` commands."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "env", "id", "sleep", "grep", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "apt-get").write_text(FAKE_APT)
    (bin_dir / "sudo").write_text('#!/bin/bash\nexec "$@"\n')
    for name in present:
        (bin_dir / name).write_text("#!/bin/bash\necho 'Noto Sans CJK JP'\n")
    for path in bin_dir.iterdir():
        if not path.is_symlink():
            path.chmod(0o755)
    return bin_dir


def _run(tmp_path: Path, bin_dir: Path, **env: str) -> tuple[subprocess.CompletedProcess[str],
                                                               list[str]]:
    log = tmp_path / "apt.log"
    environment = {"PATH": str(bin_dir), "APT_LOG": str(log), "APT_RETRY_SECONDS": "0"} | env
    done = subprocess.run([str(bin_dir / "bash"), str(SCRIPT), "tests"], env=environment,
                          capture_output=True, text=True, check=False)
    return done, log.read_text().splitlines() if log.exists() else []


def test_a_bare_machine_gets_the_browsers_and_java_after_waiting_for_the_lock(
        tmp_path: Path) -> None:
    done, calls = _run(tmp_path, _bin(tmp_path), APT_LOCK_WAIT="60", APT_FAIL_UPDATES="2")
    assert done.returncode == 0, done.stderr
    assert calls == ["-o DPkg::Lock::Timeout=60 update -qq"] * 3 + [
        f"-o DPkg::Lock::Timeout=60 install -y -qq {BROWSERS} openjdk-17-jre-headless"]
    assert done.stderr.count("retrying") == 2


def test_only_java_when_only_java_is_missing(tmp_path: Path) -> None:
    present = ("chromium", "chromedriver", "fc-list", "pdftoppm")
    done, calls = _run(tmp_path, _bin(tmp_path, present))
    assert done.returncode == 0, done.stderr
    assert calls[-1] == "-o DPkg::Lock::Timeout=900 install -y -qq openjdk-17-jre-headless"


def test_nothing_is_installed_when_nothing_is_missing(tmp_path: Path) -> None:
    present = ("chromium", "chromedriver", "fc-list", "pdftoppm", "java")
    done, calls = _run(tmp_path, _bin(tmp_path, present))
    assert done.returncode == 0 and calls == [] and done.stderr == ""


def test_a_lock_held_past_the_limit_fails_with_a_message(tmp_path: Path) -> None:
    done, calls = _run(tmp_path, _bin(tmp_path), APT_LOCK_WAIT="0", APT_FAIL_UPDATES="99")
    assert done.returncode == 1
    assert "still failing after 0 s" in done.stderr
    assert not any(" install " in call for call in calls)


def test_the_script_is_executable_for_make() -> None:
    assert os.access(SCRIPT, os.X_OK)
