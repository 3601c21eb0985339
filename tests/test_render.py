"""The SVG renderer: a snapshot of a fixed shoe, marks and windows, themes."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from roads.board import Board, CoupInfo
from roads.errors import InputError
from roads.render import (
    SCREEN_COLUMNS,
    ask_marks_svg,
    key_mark_svg,
    road_svg,
    scoreboard_svg,
    screen_road_svg,
)

SNAPSHOT = Path(__file__).parent / "snapshots" / "scoreboard.svg"
SVG = "{http://www.w3.org/2000/svg}"


def fixed_board() -> Board:
    """A shoe with a tail, ties (one multiple), pairs and naturals."""
    board = Board()
    for i, ch in enumerate("TBBBBBBBPPTTPBPBBPTBPPB"):
        board.append(CoupInfo(ch, player_pair=i % 5 == 0, banker_pair=i % 7 == 0,
                              natural=i % 4 == 0, player_total=i % 10, banker_total=(i + 3) % 10))
    return board


def test_scoreboard_snapshot() -> None:
    svg = scoreboard_svg(fixed_board(), title="Table 7 · shoe 12")
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(svg, encoding="utf-8")
    assert svg == SNAPSHOT.read_text(encoding="utf-8")


def test_svg_is_well_formed_and_has_every_mark() -> None:
    board = fixed_board()
    root = ET.fromstring(scoreboard_svg(board))
    groups = {g.get("class"): g for g in root.iter(f"{SVG}g") if g.get("class")}
    big = groups["road big_road"]
    rings = [c for c in big.iter(f"{SVG}circle") if c.get("fill") == "none"]
    assert len(rings) == len(board.big_road)
    slashes = [ln for ln in big.iter(f"{SVG}line") if ln.get("stroke") == "#1f9d3a"]
    assert len(slashes) == sum(1 for c in board.big_road if c.ties)
    counts = [t.text for t in big.iter(f"{SVG}text")]
    assert counts == ["2"]  # only the cell with two ties carries a number
    bead = groups["road bead_plate"]
    assert len([c for c in bead.iter(f"{SVG}circle") if c.get("r") == "10.08"]) == len(board)
    beb = groups["road big_eye_boy"]
    assert len([c for c in beb.iter(f"{SVG}circle")]) == len(board.marks("big_eye_boy"))
    pig = groups["road cockroach_pig"]
    assert len([ln for ln in pig.iter(f"{SVG}line") if ln.get("stroke-linecap")]) == len(
        board.marks("cockroach_pig"))
    assert "ask-box ask-b" in groups and "ask-box ask-p" in groups


def test_pair_dots_and_natural_star_positions() -> None:
    board = Board()
    board.append(CoupInfo("B", player_pair=True, banker_pair=True, natural=True))
    svg = road_svg(board, "big_road")
    # Cell (0,0) centre is (12,12) at 24 px: Banker dot top-left, Player dot bottom-right.
    assert '<circle cx="4.32" cy="4.32" r="2.4" fill="#d0212b"' in svg
    assert '<circle cx="19.68" cy="19.68" r="2.4" fill="#1f5fd1"' in svg
    assert "<polygon" in svg  # the natural star


def test_window_shows_the_last_columns() -> None:
    board = Board.from_outcomes("BP" * 30)  # 60 Big Road columns
    full = road_svg(board, "big_road")
    screen = road_svg(board, "big_road", window=12)
    assert 'width="1440"' in full  # 60 columns of 24 px
    assert 'width="288"' in screen
    assert len(re.findall(r'fill="none"', screen)) == 12  # only the visible rings


def test_colorblind_theme_differs_by_shape() -> None:
    board = Board.from_outcomes("BPBPPBBPPPB")
    classic = road_svg(board, "big_road")
    safe = road_svg(board, "big_road", theme="colorblind")
    assert classic.count("<rect") == 2  # page and grid backgrounds: the marks are all rings
    assert safe.count("<rect") == 2 + "BPBPPBBPPPB".count("P")  # Player rings are squares
    small = road_svg(board, "small_road", theme="colorblind")
    assert "<rect" in small and "<circle" in small


def test_ask_blinks_the_hypothetical_cells() -> None:
    board = Board.from_outcomes("BBPPPBPBB")
    svg = scoreboard_svg(board, ask="P", window=12)
    assert svg.count('class="ask-p"') == 4  # Big Road + three derived roads
    assert "<animate" in svg


def test_unknown_theme() -> None:
    with pytest.raises(InputError, match="unknown theme"):
        road_svg(Board(), "big_road", theme="neon")


def test_labels_are_escaped_and_translatable() -> None:
    svg = scoreboard_svg(Board.from_outcomes("BPT"), labels={"big_road": "大路 <&>"})
    assert "大路 &lt;&amp;&gt;" in svg
    ET.fromstring(svg)


def _attrs(svg: str) -> dict[str, str]:
    return ET.fromstring(svg).attrib


@pytest.mark.parametrize("road", ["bead_plate", "big_road", "big_eye_boy", "small_road",
                                  "cockroach_pig"])
def test_screen_road_names_its_newest_column_and_draws_the_whole_shoe(road: str) -> None:
    board = Board.from_outcomes("BP" * 40)  # 80 coups, each its own Big Road column
    svg = screen_road_svg(board, road, theme="dark", visible=10)
    attrs = _attrs(svg)
    last, columns = int(attrs["data-last"]), int(attrs["data-columns"])
    if road == "bead_plate":
        assert last == len(board) // 6  # the next bead's column
    elif road == "big_road":
        assert last == 80  # the newest column is 79; either ask opens column 80
    else:
        assert last >= max(m.col for m in board.marks(road))
    assert columns == max(last + 1, SCREEN_COLUMNS)
    # One unit per cell whatever the road (each road has its own box on a screen).
    grid = ET.fromstring(svg).find(f"{SVG}g/{SVG}rect")
    assert grid is not None and grid.get("height") == str(6 * 24)
    assert grid.get("width") == str(columns * 24)
    # Without the page's script the initial view is the newest 10 columns.
    assert attrs["viewBox"] == f"{(last + 1 - 10) * 24} 0 240 144"


def test_screen_road_of_a_new_shoe_starts_at_the_left() -> None:
    attrs = _attrs(screen_road_svg(Board.from_outcomes("BPB"), "big_road"))
    assert attrs["viewBox"].startswith("0 0 ") and attrs["data-columns"] == str(SCREEN_COLUMNS)


def test_ask_marks_show_what_each_derived_road_would_get() -> None:
    board = Board.from_outcomes("BBPPPBPBB")
    for outcome in ("B", "P"):
        root = ET.fromstring(ask_marks_svg(board, outcome, "classic"))
        colours = board.ask(outcome).colors
        painted = [e.get("stroke") or e.get("fill") for e in root]
        expected = ["#d0212b" if colours[r] == "red" else "#1f5fd1" for r in
                    ("big_eye_boy", "small_road", "cockroach_pig") if colours[r]]
        assert painted == expected


def test_key_marks_differ_by_shape_in_the_colour_blind_theme() -> None:
    tags = {key: [e.tag.removeprefix(SVG) for e in ET.fromstring(key_mark_svg(key, theme))]
            for key in ("banker", "player", "tie", "banker_pair", "natural")
            for theme in ("colorblind",)}
    assert tags == {"banker": ["circle"], "player": ["rect"], "tie": ["polygon"],
                    "banker_pair": ["circle", "circle"], "natural": ["polygon"]}
    classic = {key: [e.tag.removeprefix(SVG) for e in ET.fromstring(key_mark_svg(key, "dark"))]
               for key in ("banker", "player", "tie")}
    assert classic == {"banker": ["circle"], "player": ["circle"], "tie": ["circle"]}
    # The pair dot sits in its side's corner: Banker top-left, Player bottom-right.
    dots = {key: ET.fromstring(key_mark_svg(key))[1].attrib for key in ("banker_pair",
                                                                          "player_pair")}
    assert float(dots["banker_pair"]["cx"]) < 12 < float(dots["player_pair"]["cx"])
    with pytest.raises(ValueError, match="no key mark"):
        key_mark_svg("coup")
