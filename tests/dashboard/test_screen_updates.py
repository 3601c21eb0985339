"""Compact screen updates: applied coup by coup — through corrections, new shoes and a
reconnect — they give exactly the page a fresh screen gets from the whole state.

The oracle is :func:`dashboard.screen.screen_payload`, which draws the state from scratch
(a new board from the coups, nothing kept), parsed as a page would; the updates come from
one :class:`ScreenContent` following the incremental read model, applied by the page model
of ``screen_dom`` (the operations of ``screen.js``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.config import SiteConfig, TableConfig
from dashboard.screen import ScreenContent, screen_payload
from roads.engine import deal_shoe
from roads.ingest.entry import CoupEntry
from roads.rules import get_rules
from roads.tables import LiveError
from roads.tables.state import LiveTables
from tests.dashboard.screen_dom import ScreenPage, page_of
from tests.floor import DEALER, SUPERVISOR, Floor

SITE = SiteConfig(casino="Casino", tables={
    "T1": TableConfig("T1", "Salon 1", min_bet=100, max_bet=10000, currency="EUR")})
RULES = get_rules("standard-8")
VIEWS = (("en", "dark"), ("zh-Hant", "colorblind"))


class _Watched:
    """One table followed by the read model, drawn by one content per view, shown on one
    page per view."""

    def __init__(self, floor: Floor) -> None:
        self.floor = floor
        self.model = LiveTables(floor.service.journal)
        self.contents = {v: ScreenContent(SITE, *v) for v in VIEWS}
        self.pages = {v: ScreenPage() for v in VIEWS}
        self.updates = 0
        self.sizes: list[tuple[int, int, int]] = []  # (coups, update, whole state bytes)

    def check(self, compare: bool = True) -> None:
        """Bring every page up to date; ``compare``: hold it to a fresh screen's page (the
        pages keep their DOM between checks, so a wrong update shows at the next one)."""
        live = self.model.table("T1")
        for view, content in self.contents.items():
            update = content.update(live.state, live.board)
            page = self.pages[view]
            if update.delta is None or not page.receive(update.delta):
                page.receive(update.full)
            else:
                self.updates += 1
                if any(op[0] == "tail" for op in update.delta["ops"]):
                    self.sizes.append((len(live.state.coups), len(json.dumps(update.delta)),
                                       len(json.dumps(update.full))))
            assert page.seq == live.state.seq
            if compare:
                assert page.tree() == page_of(screen_payload(live.state, SITE, *view)["html"])


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.tuples(st.integers(1, 40), st.sampled_from(
    ["void", "B", "P", "T", "reject"])), max_size=4), st.integers(25, 85))
def test_updates_coup_by_coup_give_the_page_of_the_whole_state(
        seed: int, corrections: list[tuple[int, str]], coups: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        floor = Floor(Path(tmp))
        watched = _Watched(floor)
        shoe = deal_shoe(RULES, seed)
        floor.open_shoe("T1", "S1", burn_cards=list(shoe.burn_cards))
        watched.check()
        fixes = dict(corrections)
        for number, (player, banker) in enumerate(shoe.coups[:coups], start=1):
            floor.coup("T1", player=tuple(player), banker=tuple(banker))
            watched.check(compare=number % 4 == 0)
            what = fixes.get(number)
            if what is None:
                continue
            target = 1 + (seed + number) % number
            amended = None if what in ("void", "reject") else CoupEntry(outcome=what,
                                                                        method="keypad")
            try:
                request = floor.service.request_correction(
                    DEALER, "T1", "S1", target, "video review", amended)
            except LiveError:  # that coup is void already
                continue
            watched.check()  # a request changes the number, not the board
            floor.service.decide_correction(SUPERVISOR, request.seq, what != "reject")
            watched.check()
        floor.close("T1")
        watched.check()
        floor.open_shoe("T1", "S2")
        floor.coups("T1", "BPT")
        watched.check()
        assert watched.updates >= coups  # most changes went as updates, not whole states
        # A coup's update is a small part of the whole screen once a board has filled.
        late = [(update, whole) for coups, update, whole in watched.sizes if coups >= 40]
        assert all(update * 5 < whole for update, whole in late)


def test_a_page_that_missed_an_update_refuses_the_next_one(tmp_path: Path) -> None:
    floor = Floor(tmp_path)
    model = LiveTables(floor.service.journal)
    content = ScreenContent(SITE, "en", "dark")
    floor.open_shoe("T1", "S1")
    floor.coups("T1", "BP")
    page = ScreenPage()
    live = model.table("T1")
    assert page.receive(content.update(live.state, live.board).full)
    floor.coup("T1", "B")
    live = model.table("T1")
    missed = content.update(live.state, live.board)
    floor.coup("T1", "B")
    live = model.table("T1")
    later = content.update(live.state, live.board)
    assert missed.delta is not None and later.delta is not None
    assert later.delta["base"] == missed.seq
    assert not page.receive(later.delta)  # it was made from a state this page never had
    assert page.receive(later.full)
    assert page.tree() == page_of(screen_payload(live.state, SITE, "en", "dark")["html"])


def test_an_update_s_whole_state_is_the_state_it_was_drawn_for(tmp_path: Path) -> None:
    """The whole state is drawn only when a screen asks for it, maybe after later coups
    changed the kept drawing: it must still be the screen of its own state."""
    floor = Floor(tmp_path)
    model = LiveTables(floor.service.journal)
    content = ScreenContent(SITE, "en", "dark")
    floor.open_shoe("T1", "S1")
    drawn = []
    for outcome in "BPPBTBBBPPBPB":  # the Big Road turns, a tie lands on a cell, columns grow
        floor.coup("T1", outcome)
        live = model.table("T1")
        drawn.append((content.update(live.state, live.board), live.state))
    floor.void("T1", "S1", 3)  # a correction: the board is drawn again from scratch
    live = model.table("T1")
    drawn.append((content.update(live.state, live.board), live.state))
    for update, state in drawn:  # asked for only now, after every later update
        assert update.full["seq"] == state.seq
        assert page_of(update.full["html"]) == page_of(
            screen_payload(state, SITE, "en", "dark")["html"])
