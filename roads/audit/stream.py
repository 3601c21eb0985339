"""An export's coups written a bounded chunk at a time.

A month of a casino group is tens of millions of coups: the store's read port hands them
over in chunks (file by file, corrections applied), and each chunk is appended to the CSV and
the Parquet file in the same pass, so memory holds one chunk whatever the range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from roads.files import commit, temporary_name


def write_chunks(csv_path: Path, parquet_path: Path, chunks: Iterator[pl.DataFrame],
                 csv_ready: Callable[[pl.DataFrame], pl.DataFrame],
                 progress: Callable[[int], object] | None = None) -> tuple[int, set[
                     tuple[str, str]]]:
    """Append every chunk to both files, published atomically at the end; returns the row
    count and the (table, shoe) keys seen. Nothing is published when there are no rows."""
    csv_tmp, parquet_tmp = temporary_name(csv_path), temporary_name(parquet_path)
    total = 0
    keys: set[tuple[str, str]] = set()
    writer: pq.ParquetWriter | None = None
    arrow_schema: pa.Schema | None = None
    # Parquet encoding runs on a second thread (pyarrow and polars release the GIL) while
    # this one formats the CSV; one worker keeps the chunks in order.
    pending: list[Future[None]] = []
    try:
        with open(csv_tmp, "wb") as csv_fh, ThreadPoolExecutor(max_workers=1) as encoder:
            for chunk in chunks:
                table = chunk.to_arrow()
                if writer is None:
                    arrow_schema = table.schema
                    writer = pq.ParquetWriter(parquet_tmp, arrow_schema)
                while len(pending) >= 2:  # at most two chunks wait: memory stays flat
                    pending.pop(0).result()
                pending.append(encoder.submit(writer.write_table, table.cast(arrow_schema)))
                csv_ready(chunk).write_csv(csv_fh, include_header=total == 0)
                total += chunk.height
                keys.update(chunk.select("table_id", "shoe_id").unique().iter_rows())
                if progress is not None:
                    progress(chunk.height)
        for future in pending:
            future.result()
        if writer is not None:
            writer.close()
            writer = None
        if total:
            commit(csv_tmp, csv_path)
            commit(parquet_tmp, parquet_path)
        return total, keys
    finally:
        if writer is not None:
            writer.close()
        csv_tmp.unlink(missing_ok=True)
        parquet_tmp.unlink(missing_ok=True)
