"""The SVG renderer: a snapshot of a fixed shoe, marks and windows, themes."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from roads.board import Board, CoupInfo
from roads.errors import InputError
from roads.render import road_svg, scoreboard_svg

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
