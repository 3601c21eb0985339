"""The distinct shoes of a coups file's row groups from its key columns' dictionary indices:
no string is made until the distinct pairs are known (``roads store verify``).

Why a module of its own: it needs only numpy and pyarrow, so ``roads.store.early`` can run
it on its threads while the command is still importing polars.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from roads.arrow_arrays import integers

KEY_COLUMNS = ["table_id", "shoe_id"]


@dataclass(frozen=True)
class KeyPairs:
    """A row group's distinct keys: ``pairs`` = table index * ``width`` + shoe index, into
    the ``tables`` and ``shoes`` dictionaries."""

    pairs: np.ndarray  # int64, ascending
    width: int
    tables: pa.Array
    shoes: pa.Array


def key_pairs(group: pa.Table) -> KeyPairs | None:
    """The distinct pairs of dictionary indices of a row group's keys; None when a key is
    null or not dictionary-encoded (the caller takes the strings then)."""
    t, s = (group.column(c).combine_chunks() for c in KEY_COLUMNS)
    if not (isinstance(t, pa.DictionaryArray) and isinstance(s, pa.DictionaryArray)) \
            or t.null_count or s.null_count:
        return None
    width = max(len(s.dictionary), 1)
    ti, si = integers(t.indices), integers(s.indices)
    # a file's rows come in runs of one shoe: only the runs' first rows are compared
    first = np.r_[0, np.flatnonzero((ti[1:] != ti[:-1]) | (si[1:] != si[:-1])) + 1] \
        if len(ti) else np.zeros(0, dtype=np.int64)
    pairs = np.unique(ti[first].astype(np.int64) * width + si[first])
    return KeyPairs(pairs, width, t.dictionary, s.dictionary)


def file_keys(path: Path) -> list[KeyPairs | pa.Table]:
    """Each row group of a coups file as its distinct key pairs (or, where it has none, as
    its key columns)."""
    with pq.ParquetFile(path, read_dictionary=KEY_COLUMNS) as f:
        groups = [f.read_row_group(i, columns=KEY_COLUMNS) for i in range(f.num_row_groups)]
    return [key_pairs(g) or g for g in groups]


__all__ = ["KEY_COLUMNS", "KeyPairs", "file_keys", "key_pairs"]
