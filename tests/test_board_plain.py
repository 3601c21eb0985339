"""The board machine run as plain Python (``roads.board.plain``) against the compiled one:
the same states and the same bytes on random shoes, and who uses which."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.board import Board, LeadingTies, compiled_machine, plain

PLAIN = plain.machine()
COMPILED = compiled_machine()

shoes = st.text(alphabet="BPT", max_size=120)
conventions = st.booleans()  # own-column leading ties or not
# a coup as the machine stores it: outcome, pairs and natural (-1 not recorded), totals
coups = st.tuples(st.integers(0, 2), st.integers(-1, 1), st.integers(-1, 1),
                  st.integers(-1, 1), st.integers(-1, 9), st.integers(-1, 9))


def test_the_plain_machine_is_the_machine_source_run_without_compiling() -> None:
    for name in ("from_text", "append", "append_rows", "grow", "ask", "document"):
        assert type(getattr(PLAIN, name)) is types.FunctionType  # not a numba dispatcher
        assert type(getattr(COMPILED, name)) is not types.FunctionType
        assert getattr(PLAIN, name).__code__.co_filename == \
            getattr(COMPILED, name).py_func.__code__.co_filename
    assert plain.machine() is PLAIN and PLAIN.__name__ == plain.NAME


def _text(outcomes: str) -> np.ndarray:
    return np.frombuffer(outcomes.encode("ascii"), dtype=np.uint8)


def _asks(machine: object, state: np.ndarray) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in machine.ask(state, outcome))  # type: ignore[attr-defined]
            for outcome in (0, 1)]


def _same(plain_state: np.ndarray, compiled_state: np.ndarray) -> None:
    """Equal states, and every reader of them equal: the contract, each delta, the asks."""
    assert np.array_equal(plain_state, compiled_state)
    assert PLAIN.document(plain_state, 0, False).tobytes() == \
        COMPILED.document(compiled_state, 0, False).tobytes()
    for since in range(int(compiled_state[COMPILED.COUPS]) + 1):
        assert PLAIN.document(plain_state, since, True).tobytes() == \
            COMPILED.document(compiled_state, np.int64(since), True).tobytes()
    assert _asks(PLAIN, plain_state) == _asks(COMPILED, compiled_state)


@settings(max_examples=150, deadline=None)
@given(shoes, conventions)
def test_a_shoe_from_text_is_the_same_in_both_machines(outcomes: str, own_column: bool) -> None:
    plain_state, plain_n = PLAIN.from_text(_text(outcomes), own_column)
    compiled_state, compiled_n = COMPILED.from_text(_text(outcomes), own_column)
    assert int(plain_n) == int(compiled_n) == len(outcomes)
    _same(plain_state, compiled_state)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="BPTx ", min_size=1, max_size=20), conventions)
def test_a_bad_character_is_found_at_the_same_place(outcomes: str, own_column: bool) -> None:
    plain_state, plain_n = PLAIN.from_text(_text(outcomes), own_column)
    compiled_state, compiled_n = COMPILED.from_text(_text(outcomes), own_column)
    assert int(plain_n) == int(compiled_n)
    assert np.array_equal(plain_state, compiled_state)


@settings(max_examples=100, deadline=None)
@given(st.lists(coups, max_size=90), conventions, st.integers(1, 40))
def test_coups_with_pairs_and_totals_and_a_grown_state_are_the_same(
        rows: list[tuple[int, ...]], own_column: bool, capacity: int) -> None:
    """Rows appended in two halves, the state grown in between (the live path)."""
    states = []
    for machine in (PLAIN, COMPILED):
        half = len(rows) // 2
        state = PLAIN.new_state(max(capacity, half, 1), own_column)
        if half:
            machine.append_rows(state, np.array(rows[:half], dtype=np.int64))
        bigger = PLAIN.new_state(max(capacity, len(rows), 1) * 2, own_column)
        machine.grow(state, bigger)
        for row in rows[half:]:
            machine.append(bigger, *(np.int64(v) for v in row))
        states.append(bigger)
    _same(*states)


@settings(max_examples=40, deadline=None)
@given(shoes, conventions)
def test_a_board_of_either_machine_reads_the_same(outcomes: str, own_column: bool) -> None:
    """A Board adopting a plain state gives the compiled board's contract and cells."""
    leading: LeadingTies = "own-column" if own_column else "first-cell"
    compiled = Board.from_outcomes(outcomes, leading)  # the compiled machine is loaded here
    state, _ = PLAIN.from_text(_text(outcomes), own_column)
    adopted = Board.__new__(Board)
    adopted._adopt(leading, state)
    assert adopted.to_json() == compiled.to_json()
    assert adopted.to_dict() == compiled.to_dict() == json.loads(compiled.to_json())
    assert adopted.big_road == compiled.big_road


FRESH = """
import json, sys
from roads.board import Board
from roads.board.board import PLAIN_BUDGET
short = Board.from_outcomes(sys.argv[1])
out = {"short": short.to_json().decode(), "after_short": "numba" in sys.modules}
for _ in range(PLAIN_BUDGET // 40 + 1):
    Board.from_outcomes("BPPBT" * 8).to_json()
out["after_budget"] = "numba" in sys.modules
print(json.dumps(out))
"""


def test_a_short_board_does_not_load_numba_until_the_budget_is_spent() -> None:
    outcomes = "TBBPPPBPBBTTPBBBBBBBBP"
    done = subprocess.run([sys.executable, "-c", FRESH, outcomes], capture_output=True,
                          text=True, check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["short"].encode() == Board.from_outcomes(outcomes).to_json()
    assert out["after_short"] is False  # drawn by the plain machine
    assert out["after_budget"] is True  # a process that keeps drawing moves to the compiled


def test_the_board_command_does_not_load_numba() -> None:
    script = ("import sys\nfrom roads.cli import _invoke\ncode = _invoke(sys.argv[1:])\n"
              "print('LOADED', code, 'numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script, "board", "BBPPPBPBB", "--json"],
                          capture_output=True, text=True, check=True)
    *document, loaded = done.stdout.splitlines()
    assert loaded == "LOADED 0 False"
    assert json.loads("\n".join(document)) == Board.from_outcomes("BBPPPBPBB").to_dict()


EVERY_KERNEL = """
import json
from roads.board import Board, CoupInfo, compiled_machine
machine = compiled_machine()
def overloads():
    return {name: len(f.overloads) for name, f in vars(machine).items()
            if hasattr(f, "overloads")}
before = overloads()
board = Board.from_outcomes("BPPT" * 40)  # past its capacity below: grows
board.append("B")
board.append(CoupInfo("P", player_pair=True, natural=False, player_total=8, banker_total=3))
board.extend([CoupInfo("T")] * 100)
board.to_json(), board.delta_json(150), board.to_dict(), board.ask("B"), board.big_road
Board.from_coups([{"outcome": "B", "player_pair": None}]).to_json()
after = overloads()
print(json.dumps({"loaded": sum(before.values()), "new": {k: after[k] - before[k]
                                                         for k in after if after[k] != before[k]}}))
"""


def test_loading_the_compiled_machine_loads_every_kernel_a_board_calls() -> None:
    """So a server that loads it before it serves never makes a request wait for a
    kernel."""
    done = subprocess.run([sys.executable, "-c", EVERY_KERNEL], capture_output=True,
                          text=True, check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["loaded"] >= 6 and out["new"] == {}
