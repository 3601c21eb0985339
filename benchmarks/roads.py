"""Roads speed: full boards per shoe (side by side with pybaccarat), the bulk path over a
stored dataset, and live incremental updates.

Run: .venv/bin/python -m benchmarks.roads [--no-peer]
Targets (issue 3): full boards >= 2.5 M coups/s (and 12x pybaccarat on the same 10,000
eight-deck shoes); bulk path >= 10 M coups/s over >= 10 M stored coups; a live update
< 1 ms per coup whatever the shoe length.

pybaccarat 0.18 (PyPI) imports the Windows-only ``msvcrt`` at import and in its setup.py, so
it is installed into its own venv (``.bench-venv/``, git-ignored) with a stand-in module
(``benchmarks/peers/stub``) on PYTHONPATH; it never enters the project's environment.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from roads.board import DERIVED, Board
from roads.board import machine as k
from roads.board.bulk import store_roads
from roads.engine import deal_batch, shoe_seeds
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation

ROOT = Path(__file__).resolve().parents[1]
PEER_VENV = ROOT / ".bench-venv"
STUB = ROOT / "benchmarks" / "peers" / "stub"


def simulated_shoes(n: int, seed: int = 2026) -> list[str]:
    batch = deal_batch(get_rules("standard-8"), shoe_seeds(seed, 0, n))
    letters = np.frombuffer(b"BPT", dtype=np.uint8)[batch.result[:, 2]].tobytes().decode()
    out, start = [], 0
    for count in batch.coups_per_shoe.tolist():
        out.append(letters[start : start + count])
        start += count
    return out


def full_boards(shoes: list[str]) -> float:
    """Coups/s for complete boards: every road's drawn cells, derived marks and both asks."""
    outcomes = np.frombuffer("".join(shoes).encode(), dtype=np.uint8)
    codes = np.select([outcomes == ord("B"), outcomes == ord("P")], [0, 1], 2).astype(np.int64)
    offsets = np.zeros(len(shoes) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in shoes], out=offsets[1:])

    def run() -> None:
        entries = np.zeros((len(codes), 7), dtype=np.int32)
        marks = np.zeros((3, len(codes), 4), dtype=np.int32)
        asks = np.zeros((len(shoes), 2, 4, 3), dtype=np.int64)
        counts = np.zeros((len(shoes), 5), dtype=np.int64)
        k.build_batch(codes, offsets, False, entries, marks, asks, counts)

    run()
    best = min(_timed(run) for _ in range(3))
    return len(codes) / best


def _timed(func: object) -> float:
    start = time.perf_counter()
    func()  # type: ignore[operator]
    return time.perf_counter() - start


def peer_pybaccarat(shoes: list[str]) -> dict[str, object] | None:
    """Run pybaccarat on the same shoes in its own venv; None when it cannot be installed."""
    python = PEER_VENV / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(STUB)}
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "setuptools", "wheel"], check=True)
        done = subprocess.run([*pip, "--no-deps", "--no-build-isolation", "pybaccarat==0.18"],
                              env=env, check=False)
        if done.returncode != 0:
            shutil.rmtree(PEER_VENV)
            return None
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(shoes))
    try:
        out = subprocess.run(
            [str(python), str(ROOT / "benchmarks" / "peers" / "pybaccarat_boards.py"), fh.name],
            env=env, capture_output=True, text=True, check=True)
    finally:
        os.unlink(fh.name)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def bulk(coups_target: int) -> tuple[float, int]:
    out = Path(tempfile.mkdtemp(prefix="roads-bench-"))
    try:
        shoes = coups_target // 80 + 1
        write_simulation(Simulation(get_rules("standard-8"), shoes=shoes, seed=9, tables=40),
                         out)
        store_roads(out)  # warm: compile
        start = time.perf_counter()
        result = store_roads(out)
        elapsed = time.perf_counter() - start
        coups = int(result["coups"].sum())
        return coups / elapsed, coups
    finally:
        shutil.rmtree(out)


def incremental(shoe: str) -> dict[str, float]:
    """Per-coup cost of a live update: append alone, and append + the screen's full SVG."""
    from roads.render import scoreboard_svg

    board = Board(capacity=256)
    board.append("B")
    append_us, redraw_ms = [], []
    for ch in shoe:
        start = time.perf_counter()
        board.append(ch)
        append_us.append((time.perf_counter() - start) * 1e6)
        start = time.perf_counter()
        scoreboard_svg(board, window=24)
        redraw_ms.append((time.perf_counter() - start) * 1e3)
    head, tail = append_us[: len(shoe) // 4], append_us[-len(shoe) // 4 :]
    return {"append_median_us_first_quarter": statistics.median(head),
            "append_median_us_last_quarter": statistics.median(tail),
            "append_max_us": max(append_us[1:]),
            "redraw_median_ms": statistics.median(redraw_ms),
            "redraw_max_ms": max(redraw_ms)}


def main() -> None:
    shoes = simulated_shoes(10_000)
    coups = sum(len(s) for s in shoes)
    ours = full_boards(shoes)
    print(f"full boards, ours: {ours / 1e6:6.2f} M coups/s "
          f"({len(shoes):,} eight-deck shoes, {coups:,} coups)")
    if "--no-peer" not in sys.argv:
        peer = peer_pybaccarat(shoes)
        if peer is None:
            print("pybaccarat: could not be installed here; side-by-side figure not measured")
        else:
            rate = float(peer["coups_per_second"])  # type: ignore[arg-type]
            roads: list[list[str]] = peer["roads"]  # type: ignore[assignment]
            agree = sum(
                [Board.from_outcomes(shoe).mark_string(r) for r in DERIVED] == theirs
                for shoe, theirs in zip(shoes, roads, strict=True))
            print(f"full boards, pybaccarat 0.18: {rate / 1e6:6.3f} M coups/s "
                  f"-> ours is {ours / rate:,.1f}x; derived roads agree on {agree:,} of "
                  f"{len(shoes):,} shoes")
    rate, n = bulk(10_000_000)
    print(f"bulk path over a stored dataset: {rate / 1e6:6.2f} M coups/s ({n:,} coups, "
          f"read from Parquet included)")
    long_shoe = "".join(simulated_shoes(3, seed=1))[:240]
    figures = incremental(long_shoe)
    print("live update: append {append_median_us_first_quarter:.1f} us (median, first quarter"
          " of a 240-coup shoe) vs {append_median_us_last_quarter:.1f} us (last quarter), "
          "max {append_max_us:.1f} us; append + full screen SVG redraw: median "
          "{redraw_median_ms:.2f} ms, max {redraw_max_ms:.2f} ms".format(**figures))


if __name__ == "__main__":
    main()
