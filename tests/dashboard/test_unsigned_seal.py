"""A seal (the one write ``serve`` signs) over a journal rewritten behind its checkpoints:
the seal is committed, and the answer says so (500 with the reason), not a bare error."""

from __future__ import annotations

from typing import Any

from tests.dashboard.test_api import _auth, _open
from tests.store.rechain import rechain


def test_a_seal_that_cannot_be_signed_says_it_is_stored(server: Any) -> None:
    store = server.ctx.service.store
    _open(server)
    for _ in range(2):
        assert server.client.post("/api/tables/T1/coups", json={"outcome": "B"},
                                  headers=_auth(server.key)).status_code == 201
    store.sign_head()  # (a checkpoint over the coups, as another table's seal would sign)
    events = store.journal.events()
    coup = next(e for e in events if e.kind == "coup_entered")
    rechain(store.root / "journal.sqlite", events, coup, {**coup.payload, "outcome": "P"})
    answer = server.client.post("/api/tables/T1/shoes/close", headers=_auth(server.key))
    assert answer.status_code == 500
    detail = answer.json()["detail"]
    assert "shoe_sealed is committed (journal event" in detail and "not signed" in detail
    assert "refusing to sign" in detail
