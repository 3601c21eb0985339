"""The read-ahead (roads.store.prefetch): files decoded on a thread before their readers
ask give the same pieces, the same report and the same errors as files read then; a file
changed since it was decoded is read again; the thread stops where the readers are."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import roads.store.prefetch as prefetch
from roads.analysis import statistics
from roads.rules import get_rules
from roads.simulate import Simulation, write_simulation
from roads.store import Store, StoreReadError
from roads.store.buffers import part_columns
from tests.stats.test_arrays import _rewrite, _same, _tampered


def _files(tmp_path: Path, shoes: int = 30) -> tuple[Store, list[Path]]:
    """A store of several part files (one simulation per table set)."""
    store = Store.create(tmp_path / "store")
    for seed in (5, 6, 7):
        write_simulation(Simulation(get_rules("standard-8"), shoes=shoes // 3, seed=seed,
                                    tables=2, table_prefix=f"S{seed}"), store)
    paths = sorted((tmp_path / "store" / "coups").rglob("part-*.parquet"))
    assert len(paths) >= 3
    return store, paths


def _wait(ahead: prefetch.ReadAhead) -> None:
    ahead._thread.join(timeout=60)
    assert not ahead._thread.is_alive()


def test_a_file_decoded_ahead_gives_the_pieces_read_from_the_file(tmp_path: Path) -> None:
    """Row groups decoded ahead (small groups: shoes cut across them; nulls; per-group
    dictionaries) make the same pieces, array by array, as the file read then."""
    _, [path, *_] = _files(tmp_path)
    _rewrite(path, _tampered(pl.read_parquet(path)), row_group_size=97)
    read = list(part_columns(path, 250))
    ahead = prefetch.start([path])
    try:
        _wait(ahead)
        assert path in ahead._ahead  # decoded, not yet handed out
        taken = list(part_columns(path, 250))
        assert path not in ahead._ahead and prefetch.take(path) is None  # handed out once
    finally:
        prefetch.stop()
    assert len(taken) == len(read) > 1
    for a, b in zip(taken, read, strict=True):
        _same(a, b)


def test_the_store_s_report_is_the_same_with_the_read_ahead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As `roads stats` runs it (read-ahead started, then the statistics), with every file
    decoded ahead and with a bound that holds only the first: the report without it."""
    store, paths = _files(tmp_path)
    _rewrite(paths[1], _tampered(pl.read_parquet(paths[1])), row_group_size=80)
    expected = statistics(store)
    for rows, decoded in ((prefetch.AHEAD_ROWS, set(paths)), (1, {paths[0]})):
        monkeypatch.setattr(prefetch, "AHEAD_ROWS", rows)
        store.read.read_ahead()
        ahead = prefetch._current
        assert ahead is not None
        _wait(ahead)
        assert set(ahead._ahead) == decoded
        assert statistics(store) == expected
        assert not ahead._ahead  # every file decoded ahead was handed to its reader
        assert prefetch._current is None  # and the read-ahead forgotten after the read


def test_a_file_changed_after_it_was_decoded_is_read_again(tmp_path: Path) -> None:
    _, [path, *_] = _files(tmp_path)
    ahead = prefetch.start([path])
    try:
        _wait(ahead)
        frame = pl.read_parquet(path)
        _rewrite(path, frame.head(frame.height // 2))
        stat = os.stat(path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        rows = sum(int(p.offsets[-1]) for p in part_columns(path))
    finally:
        prefetch.stop()
    assert rows == frame.height // 2  # the file as it is now, not as it was decoded


def test_the_thread_stops_at_a_file_its_readers_reached_first(tmp_path: Path) -> None:
    _, paths = _files(tmp_path)
    ahead = prefetch.ReadAhead([])  # its thread ends at once: run it by hand below
    _wait(ahead)
    ahead._paths = list(paths)
    assert ahead.take(paths[1]) is None  # a reader is at the second file already
    ahead._run()
    assert set(ahead._ahead) == {paths[0]}


def test_a_damaged_file_is_reported_by_its_reader_as_without_the_read_ahead(
        tmp_path: Path) -> None:
    store, paths = _files(tmp_path)
    paths[1].write_bytes(paths[1].read_bytes()[:200])
    with pytest.raises(StoreReadError) as plain:
        statistics(store)
    store.read.read_ahead()
    ahead = prefetch._current
    assert ahead is not None
    _wait(ahead)
    assert set(ahead._ahead) == {paths[0]}  # stopped at the damaged file
    with pytest.raises(StoreReadError) as read_ahead:
        statistics(store)
    assert str(read_ahead.value) == str(plain.value)
    assert pq.ParquetFile(paths[0]).metadata.num_rows > 0
