"""The one SVG renderer of roads and scoreboards (screens and reports alike)."""

from roads.render.svg import DEFAULT_LABELS, road_svg, scoreboard_svg
from roads.render.themes import THEMES, Theme, get_theme

__all__ = ["DEFAULT_LABELS", "THEMES", "Theme", "get_theme", "road_svg", "scoreboard_svg"]
