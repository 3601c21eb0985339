"""A bulk run's sweep removes each leftover once and names it once: a hidden temporary
that is both of the run's kind and of a stored file's name was removed by the first pass
and then again by the stored files' pass (listed twice, or hashed after its removal)."""

from __future__ import annotations

from pathlib import Path

from roads.files import temporary_name
from roads.store import Store
from roads.store.catalog import files
from tests.floor import Floor


def test_a_leftover_of_the_runs_kind_and_a_stored_name_is_swept_once(tmp_path: Path) -> None:
    floor = Floor(tmp_path / "store")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BPB")
    floor.close("T1")
    store: Store = floor.store
    [stored] = [e.path for e in files(store.journal.connection())
                if e.path.startswith("coups/")]
    kind = stored.rsplit("/", 1)[-1].split("-")[1]  # part-KIND-...
    leftover = temporary_name(store.root / stored)
    leftover.write_bytes(b"not the stored bytes")
    rel = leftover.relative_to(store.root).as_posix()
    with store.bulk_lock():
        gone = store.sweep((kind,))
    assert gone.count(rel) == 1, gone
    assert not leftover.exists() and (store.root / stored).exists()
