"""The server's processes as one: ``roads serve`` forks workers, so its memory and CPU are
those of the whole process tree."""

from __future__ import annotations

import os
from pathlib import Path


def tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [pid, *(p for c in children for p in tree(int(c)))]


def _status_kb(pid: int, key: str, name: str = "status") -> int:
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def memory_mb(pid: int) -> tuple[float, float]:
    """RSS summed over the process tree (shared pages counted in each process) and PSS
    (shared pages split between the processes sharing them: what the tree really uses)."""
    pids = tree(pid)
    rss = sum(_status_kb(p, "VmRSS:") for p in pids)
    pss = sum(_status_kb(p, "Pss:", "smaps_rollup") for p in pids)
    return rss / 1024, pss / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process tree so far."""
    total = 0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def tree_memory_mb(pid: int) -> float:
    """What the process tree really uses (PSS summed): a forked worker's shared pages once."""
    return memory_mb(pid)[1]

