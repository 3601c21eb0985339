"""Arrow arrays from numpy buffers and Python strings, without ``pa.array``, and back.

Why: ``pa.array`` initialises pyarrow's pandas shim, which imports pandas when it is
installed (the Spark extra brings it): about 0.4 s of every command that builds an Arrow
array, for nothing. These build the same arrays from their buffers (no copy for numpy).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def numeric(values: np.ndarray, kind: pa.DataType | None = None) -> pa.Array:
    """A one-dimensional numpy array of numbers (or booleans) as an Arrow array without
    nulls; ``kind``: the Arrow type (by default the numpy dtype's)."""
    values = np.ascontiguousarray(values)
    kind = kind or pa.from_numpy_dtype(values.dtype)
    if pa.types.is_boolean(kind):
        data = pa.py_buffer(np.packbits(values.astype(bool), bitorder="little"))
    else:
        assert kind.bit_width == 8 * values.dtype.itemsize, (kind, values.dtype)
        data = pa.py_buffer(values)
    return pa.Array.from_buffers(kind, len(values), [None, data])


def validity(keep: np.ndarray) -> pa.Buffer:
    """A validity bitmap: bit ``i`` set where ``keep[i]``."""
    return pa.py_buffer(np.packbits(keep.astype(bool), bitorder="little"))


def large_strings(values: list[str]) -> pa.Array:
    """Python strings (none missing) as an Arrow ``large_string`` array."""
    encoded = [v.encode() for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(encoded),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def large_lists(offsets: np.ndarray, values: pa.Array, keep: np.ndarray | None = None
                ) -> pa.LargeListArray:
    """A ``large_list`` of ``values`` cut at int64 ``offsets``; null where not ``keep``."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    mask = None if keep is None or keep.all() else validity(keep)
    array = pa.Array.from_buffers(pa.large_list(values.type), n,
                                  [mask, pa.py_buffer(offsets)], children=[values])
    assert isinstance(array, pa.LargeListArray)
    return array


def integers(array: pa.Array) -> np.ndarray:
    """A fixed-width integer Arrow array without nulls (list offsets, dictionary indices)
    as a zero-copy numpy view of its buffer (``to_numpy`` would import pandas too)."""
    width = array.type.bit_width // 8
    kind = "i" if pa.types.is_signed_integer(array.type) else "u"
    return np.frombuffer(array.buffers()[1], dtype=f"<{kind}{width}", count=len(array),
                         offset=array.offset * width)
