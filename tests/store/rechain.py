"""What a forger with write access to ``journal.sqlite`` does: change one event's payload
and re-chain every later hash, so the chain itself verifies again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from roads.store import Event
from roads.store.journal import event_hash


def rechain(journal_path: Path, events: list[Event], changed: Event,
            payload: dict[str, Any]) -> None:
    """Give ``changed`` the ``payload`` and re-chain it and every event after it."""
    db = sqlite3.connect(journal_path)
    db.executescript("DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete;")
    prev = changed.prev_hash
    for e in events[changed.seq - 1:]:
        body = payload if e.seq == changed.seq else e.payload
        digest = event_hash(prev, e.seq, e.at, e.kind, e.table_id, e.shoe_id, e.actor, body)
        db.execute("UPDATE events SET payload = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                   (json.dumps(body, sort_keys=True, separators=(",", ":")), prev, digest,
                    e.seq))
        prev = digest
    db.commit()
    db.close()
