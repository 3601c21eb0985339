"""The buffer-built Arrow arrays equal what ``pa.array`` builds (the oracle), and building
them does not load pandas."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from roads.arrow_arrays import integers, large_lists, large_strings, numeric

KINDS = [(np.int64, pa.int64()), (np.int16, pa.int16()), (np.uint8, pa.uint8()),
         (np.int8, pa.int8()), (np.bool_, pa.bool_())]


@settings(deadline=None)
@given(st.lists(st.integers(-128, 127), max_size=70), st.sampled_from(KINDS))
def test_numeric_equals_pa_array(values: list[int], kind: tuple[type, pa.DataType]) -> None:
    dtype, arrow = kind
    fitted = [abs(v) % 2 if dtype is np.bool_ else abs(v) if dtype is np.uint8 else v
              for v in values]
    data: np.ndarray = np.array(fitted, dtype=dtype)
    assert numeric(data, arrow).equals(pa.array(data, arrow))
    assert numeric(data).equals(pa.array(data))


@settings(deadline=None)
@given(st.lists(st.text(max_size=6), max_size=30))
def test_large_strings_equal_pa_array(values: list[str]) -> None:
    assert large_strings(values).equals(pa.array(values, pa.large_string()))


@settings(deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(0, 51), max_size=3)), max_size=40))
def test_large_lists_equal_pa_array(hands: list[list[int] | None]) -> None:
    flat = np.array([c for h in hands if h for c in h], dtype=np.uint8)
    offsets = np.cumsum([0, *(len(h) if h else 0 for h in hands)])
    keep = np.array([h is not None for h in hands], dtype=bool)
    built = large_lists(offsets, numeric(flat, pa.uint8()), keep)
    assert built.equals(pa.array(hands, pa.large_list(pa.uint8())))


@settings(deadline=None)
@given(st.lists(st.integers(0, 127), min_size=1, max_size=40), st.integers(0, 39),
       st.sampled_from([pa.int64(), pa.int32(), pa.uint8(), pa.int8()]))
def test_integers_view_the_buffer_as_to_numpy_reads_it(values: list[int], start: int,
                                                        kind: pa.DataType) -> None:
    sliced = pa.array(values, kind).slice(min(start, len(values)))  # (an offset, too)
    assert integers(sliced).tolist() == sliced.to_pylist()


def test_building_arrays_does_not_load_pandas() -> None:
    code = ("import sys, numpy as np, pyarrow as pa; from roads.arrow_arrays import *;"
            "large_lists(np.array([0, 1]), numeric(np.array([3], np.uint8)), np.array([True]));"
            "large_strings(['As']); import roads.ingest.validate;"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
