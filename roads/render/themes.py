"""Colour themes for the scoreboard renderer.

``shapes=True`` makes every mark differ by shape as well as colour (Banker and red marks
round, Player and blue marks square, Tie a diamond; Cockroach Pig slashes lean opposite
ways), so the board reads correctly without colour vision.
"""

from __future__ import annotations

from dataclasses import dataclass

from roads.errors import InputError


@dataclass(frozen=True, slots=True)
class Theme:
    name: str
    background: str
    grid: str
    text: str
    banker: str
    player: str
    tie: str
    natural: str
    panel: str
    shapes: bool = False


THEMES: dict[str, Theme] = {
    t.name: t
    for t in (
        Theme("classic", background="#ffffff", grid="#c9ced6", text="#1d2430",
              banker="#d0212b", player="#1f5fd1", tie="#1f9d3a", natural="#d4a017",
              panel="#f3f5f8"),
        Theme("dark", background="#0f141b", grid="#2c3542", text="#e8edf3",
              banker="#ff4d4f", player="#4d8dff", tie="#3ecf6a", natural="#f5c542",
              panel="#18202b"),
        # Okabe-Ito palette (vermillion / blue / bluish green) plus distinct shapes.
        Theme("colorblind", background="#ffffff", grid="#c9ced6", text="#1d2430",
              banker="#d55e00", player="#0072b2", tie="#009e73", natural="#e69f00",
              panel="#f3f5f8", shapes=True),
    )
}


def get_theme(name: str) -> Theme:
    try:
        return THEMES[name]
    except KeyError:
        raise InputError(f"unknown theme {name!r}; known: {', '.join(THEMES)}") from None
