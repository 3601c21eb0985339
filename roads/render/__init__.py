"""The one SVG renderer of roads and scoreboards (screens and reports alike)."""

from roads.render.svg import (
    DEFAULT_LABELS,
    SCREEN_COLUMNS,
    ScreenRoad,
    ask_marks_svg,
    key_mark_svg,
    road_svg,
    scoreboard_svg,
    screen_road,
    screen_road_svg,
)
from roads.render.themes import THEMES, Theme, get_theme

__all__ = ["DEFAULT_LABELS", "SCREEN_COLUMNS", "THEMES", "ScreenRoad", "Theme", "ask_marks_svg",
           "get_theme", "key_mark_svg", "road_svg", "scoreboard_svg", "screen_road",
           "screen_road_svg"]
