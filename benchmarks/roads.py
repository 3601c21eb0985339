"""Roads speed, each figure side by side with the public peers on the same shoes.

Run: .venv/bin/python -m benchmarks.roads [--runs 5] [--no-peer] [--bulk-coups 10000000]

(a) The per-shoe API: ``Board.from_outcomes`` and the whole JSON contract (``to_json``:
    every road's cells, both asks, counts) for one shoe at a time, against pybaccarat 0.18
    and the npm baccarat-engine 1.1.5 drawing their roads one shoe at a time over the same
    10,000 eight-deck shoes. Targets (issue 18): >= 2 M coups/s and >= 10x both peers.
    Beside it, the same loop with ``to_dict`` (Python objects) and with the cell objects.
(b) The bulk kernel (``machine.build_batch``: full boards of every shoe in one call) against
    the same peer runs at one thread, and at every core; then the bulk path over a stored
    dataset (``store_roads``, Parquet read included; target >= 10 M coups/s).
(c) Live: append one coup and get the JSON delta of the changed cells, per coup, first
    against last quarter of a 240-coup shoe (target <= 50 us, flat in shoe length).

Every figure is a median of ``--runs`` runs; ours and the peers' runs are interleaved
(ours, pybaccarat, baccarat-engine, ours, ...) and each peer is one thread (CPython, node),
as is every figure of ours but "every core", so a shared machine's load falls on all alike.

pybaccarat imports the Windows-only ``msvcrt`` at import and in its setup.py: it is
installed into its own venv (``.bench-venv/``, git-ignored) with a stand-in module
(``benchmarks/peers/stub``) on PYTHONPATH. baccarat-engine is installed with the machine's
npm into ``.bench-node/`` (git-ignored); its code is never committed. Neither enters the
project's environment.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numba
import numpy as np

from roads.analysis import store_roads
from roads.board import DERIVED, Board, compiled_machine
from roads.board import machine as m
from roads.engine import deal_batch, shoe_seeds
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "benchmarks" / "peers"
PEER_VENV = ROOT / ".bench-venv"
PEER_NODE = ROOT / ".bench-node"
STUB = PEERS / "stub"
ENGINE = PEER_NODE / "node_modules" / "baccarat-engine"
Run = Callable[[], float]


def simulated_shoes(n: int, seed: int = 2026) -> list[str]:
    batch = deal_batch(get_rules("standard-8"), shoe_seeds(seed, 0, n))
    letters = np.frombuffer(b"BPT", dtype=np.uint8)[batch.result[:, 2]].tobytes().decode()
    out, start = [], 0
    for count in batch.coups_per_shoe.tolist():
        out.append(letters[start : start + count])
        start += count
    return out


def _rate(coups: int, func: Callable[[], object]) -> float:
    start = time.perf_counter()
    func()
    return coups / (time.perf_counter() - start)


# ------------------------------------------------------------------ (a) per-shoe API
def per_shoe_runs(shoes: list[str]) -> dict[str, Run]:
    """One run of each per-shoe loop; each returns coups/s."""
    coups = sum(len(s) for s in shoes)

    def contract_json() -> None:
        for shoe in shoes:
            Board.from_outcomes(shoe).to_json()

    def contract_dict() -> None:
        for shoe in shoes:
            Board.from_outcomes(shoe).to_dict()

    def cells() -> None:
        for shoe in shoes:
            board = Board.from_outcomes(shoe)
            board.bead_plate, board.big_road, board.ask("B"), board.ask("P")
            for road in DERIVED:
                board.marks(road)

    compiled_machine()  # load the kernels outside the timing (short boards would run plain)
    warm = Board.from_outcomes(shoes[0])
    warm.to_json(), warm.to_dict(), warm.big_road
    return {name: partial(_rate, coups, func) for name, func in
            (("json", contract_json), ("dict", contract_dict), ("cells", cells))}


# ------------------------------------------------------------------ (b) bulk kernel
def bulk_kernel_run(shoes: list[str]) -> Callable[[int], float]:
    """A run of the bulk kernel over every shoe at ``threads`` threads; returns coups/s."""
    outcomes = np.frombuffer("".join(shoes).encode(), dtype=np.uint8)
    codes = np.select([outcomes == ord("B"), outcomes == ord("P")], [0, 1], 2).astype(np.int64)
    offsets = np.zeros(len(shoes) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in shoes], out=offsets[1:])

    def once() -> None:
        entries = np.zeros((len(codes), m.ENTRY_FIELDS), dtype=np.int32)
        marks = np.zeros((3, len(codes), m.MARK_FIELDS), dtype=np.int32)
        asks = np.zeros((len(shoes), 2, 11), dtype=np.int64)
        counts = np.zeros((len(shoes), 5), dtype=np.int64)
        m.build_batch(codes, offsets, False, entries, marks, asks, counts)

    def run(threads: int) -> float:
        every = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return _rate(len(codes), once)
        finally:
            numba.set_num_threads(every)

    run(1)  # compile outside the timing
    return run


def stored_bulk(coups_target: int, runs: int) -> tuple[float, int]:
    """Median coups/s of ``store_roads`` over a simulated store of ``coups_target`` coups."""
    out = Path(tempfile.mkdtemp(prefix="roads-bench-"))
    try:
        store = Store.create(out)
        write_simulation(Simulation(get_rules("standard-8"), shoes=coups_target // 80 + 1,
                                    seed=9, tables=40), store)
        coups = int(store_roads(store)["coups"].sum())  # warm: compile
        return statistics.median(_rate(coups, lambda: store_roads(store))
                                 for _ in range(runs)), coups
    finally:
        shutil.rmtree(out)


# ------------------------------------------------------------------ peers
def _pybaccarat() -> Path | None:
    """The peer venv's python, installing pybaccarat there on first use (None: cannot)."""
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        env = {**os.environ, "PYTHONPATH": str(STUB)}
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "setuptools", "wheel"], check=True)
        done = subprocess.run([*pip, "--no-deps", "--no-build-isolation", "pybaccarat==0.18"],
                              env=env, check=False)
        if done.returncode != 0:
            shutil.rmtree(PEER_VENV)
            return None
    return python


def _baccarat_engine() -> bool:
    """Install the npm peer into .bench-node/ on first use (False: no npm or no registry)."""
    if not (ENGINE / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None:
            return False
        PEER_NODE.mkdir(exist_ok=True)
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                               str(PEER_NODE), "baccarat-engine@1.1.5"], check=False,
                              capture_output=True)
        if done.returncode != 0:
            return False
    return shutil.which("node") is not None


def peer_runs(shoes_file: Path) -> dict[str, Callable[[], dict[str, Any]]]:
    """One run of each installable peer over the shoes file: its coups/s and derived roads."""
    runs: dict[str, Callable[[], dict[str, Any]]] = {}

    def driven(command: list[str], env: dict[str, str]) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            out = subprocess.run([*command, str(shoes_file), "1"], env={**os.environ, **env},
                                 capture_output=True, text=True, check=True)
            result: dict[str, Any] = json.loads(out.stdout)
            return result
        return run

    python = _pybaccarat()
    if python is not None:
        runs["pybaccarat 0.18"] = driven([str(python), str(PEERS / "pybaccarat_boards.py")],
                                         {"PYTHONPATH": str(STUB)})
    if _baccarat_engine():
        runs["baccarat-engine 1.1.5"] = driven(
            ["node", str(PEERS / "baccarat_engine_boards.js")],
            {"BACCARAT_ENGINE_DIR": str(ENGINE)})
    return runs


# ------------------------------------------------------------------ (c) live
def live(shoe: str, repeats: int) -> dict[str, float]:
    """Per-coup cost on an open board (default capacity 128, so it grows once mid-shoe; no
    real shoe is that long):
    append + the delta JSON, and append alone; medians per coup over ``repeats`` shoes."""
    from roads.render import scoreboard_svg

    def per_coup(step: Callable[[Board, int, str], object]) -> list[float]:
        times: list[list[float]] = [[] for _ in shoe]
        for _ in range(repeats):
            board = Board()
            for i, ch in enumerate(shoe):
                start = time.perf_counter()
                step(board, i, ch)
                times[i].append((time.perf_counter() - start) * 1e6)
        return [statistics.median(t) for t in times]

    def append_and_delta(board: Board, i: int, ch: str) -> bytes:
        board.append(ch)
        return board.delta_json(i)

    with_delta = per_coup(append_and_delta)
    append_only = per_coup(lambda b, i, ch: b.append(ch))
    quarter = len(shoe) // 4
    board = Board()
    sizes, redraw = [], []
    for i, ch in enumerate(shoe):
        board.append(ch)
        sizes.append(len(board.delta_json(i)))
        start = time.perf_counter()
        scoreboard_svg(board, window=24)
        redraw.append((time.perf_counter() - start) * 1e3)
    return {"delta_first": statistics.median(with_delta[:quarter]),
            "delta_last": statistics.median(with_delta[-quarter:]),
            "delta_max": max(with_delta), "delta_max_at": with_delta.index(max(with_delta)),
            "append_first": statistics.median(append_only[:quarter]),
            "append_last": statistics.median(append_only[-quarter:]),
            "delta_bytes": statistics.median(sizes), "full_bytes": len(board.to_json()),
            "redraw_ms": statistics.median(redraw)}


def _agreement(shoes: list[str], roads: list[list[str]]) -> int:
    return sum([Board.from_outcomes(shoe).mark_string(r) for r in DERIVED] == theirs
               for shoe, theirs in zip(shoes, roads, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--bulk-coups", type=int, default=10_000_000)
    args = parser.parse_args()
    runs = max(3, args.runs)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; "
          f"medians of {runs} interleaved runs")

    shoes = simulated_shoes(10_000)
    coups = sum(len(s) for s in shoes)
    ours = per_shoe_runs(shoes)
    bulk = bulk_kernel_run(shoes)
    all_cores = numba.get_num_threads()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(shoes))
    try:
        peers = {} if args.no_peer else peer_runs(Path(fh.name))
        rates: dict[str, list[float]] = {}
        checks: dict[str, int] = {}
        for r in range(runs):
            for name, run in ours.items():
                rates.setdefault(name, []).append(run())
            rates.setdefault("bulk 1", []).append(bulk(1))
            rates.setdefault("bulk all", []).append(bulk(all_cores))
            for name, peer in peers.items():
                result = peer()
                rates.setdefault(name, []).append(float(result["coups_per_second"][0]))
                if r == 0:
                    checks[name] = _agreement(shoes, result["roads"])
    finally:
        os.unlink(fh.name)
    med = {name: statistics.median(values) for name, values in rates.items()}

    def vs_peers(rate: float) -> str:
        return "; ".join(f"{rate / med[name]:,.1f}x {name}" for name in peers) or "no peer"

    print(f"\n(a) per-shoe API, one shoe at a time, 1 thread ({len(shoes):,} eight-deck shoes, "
          f"{coups:,} coups)")
    print(f"  Board.from_outcomes + to_json (every road, both asks): {med['json'] / 1e6:6.2f} "
          f"M coups/s -> {vs_peers(med['json'])}")
    for name in peers:
        print(f"  {name}, its roads one shoe at a time: {med[name] / 1e6:6.3f} M coups/s "
              f"(derived roads equal to ours on {checks[name]:,} of {len(shoes):,} shoes)")
    print(f"  beside it: + to_dict (Python objects): {med['dict'] / 1e6:6.3f} M coups/s "
          f"({vs_peers(med['dict'])}); + cell objects and asks: {med['cells'] / 1e6:6.3f} "
          f"M coups/s ({vs_peers(med['cells'])})")
    print("  (baccarat-engine has no ask road; pybaccarat computes the Banker ask only)")

    print(f"\n(b) bulk kernel (machine.build_batch, full boards of all {len(shoes):,} shoes "
          "in one call)")
    print(f"  1 thread: {med['bulk 1'] / 1e6:6.2f} M coups/s -> {vs_peers(med['bulk 1'])}")
    print(f"  {all_cores} threads: {med['bulk all'] / 1e6:6.2f} M coups/s")
    rate, n = stored_bulk(args.bulk_coups, runs)
    print(f"  bulk path over a stored dataset (store_roads, {all_cores} threads): "
          f"{rate / 1e6:6.2f} M coups/s ({n:,} coups, Parquet read included)")

    long_shoe = "".join(simulated_shoes(3, seed=1))[:240]
    f = live(long_shoe, runs)
    print("\n(c) live, one coup on an open board (240-coup shoe, median per coup over "
          f"{runs} shoes)")
    print(f"  append + delta JSON: {f['delta_first']:.1f} us (first quarter) vs "
          f"{f['delta_last']:.1f} us (last quarter), max {f['delta_max']:.1f} us at coup "
          f"{f['delta_max_at']:.0f} (the state grows past 128 coups at coup 128); "
          f"delta {f['delta_bytes']:.0f} bytes (whole contract at the end "
          f"{f['full_bytes']:,} bytes)")
    print(f"  append alone: {f['append_first']:.1f} us vs {f['append_last']:.1f} us; "
          f"append + full screen SVG redraw: {f['redraw_ms']:.2f} ms")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
