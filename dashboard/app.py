"""The server: one FastAPI application carrying the Dash dashboard, the table-side screens'
push channel, operator entry, the HTTP API and ``/health`` (served by uvicorn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dash import Dash
from fastapi.staticfiles import StaticFiles

from dashboard.api import api_router, health, install_errors
from dashboard.config import SiteConfig
from dashboard.context import Context
from dashboard.pages import register, shell
from dashboard.web import web_router
from roads.board import Board
from roads.render import scoreboard_svg

HERE = Path(__file__).parent


def create_app(root: Path, site: SiteConfig | None = None,
               create: bool = True) -> tuple[Dash, Context]:
    """The Dash app (``app.server`` is the FastAPI application) and its shared context
    (``create``: make the store when there is none)."""
    ctx = Context.open(root, site or SiteConfig(), create)
    # update_title=None: a kiosk never shows "Updating..." in its title (typed as str).
    app = Dash(__name__, backend="fastapi", title=ctx.site.casino,
               update_title=None,  # type: ignore[arg-type]
               serve_locally=True, suppress_callback_exceptions=True,
               assets_folder=str(HERE / "assets"))
    server: Any = app.server
    server.title = "Baccarat Roads API"
    server.add_api_route("/health", lambda: health(ctx), methods=["GET"], tags=["health"])
    server.include_router(api_router(ctx))
    server.include_router(web_router(ctx))
    server.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    install_errors(server)
    app.layout = shell(ctx)
    register(app, ctx)
    # Dash's FastAPI backend sets itself up (the assets' stylesheets) on the first request
    # to "/" or "/_dash-*" only: a first visit to /tables/<id> got the page without its CSS.
    app._setup_server()  # type: ignore[no-untyped-call]
    _warm_up()
    return app, ctx


def _warm_up() -> None:
    """Load the compiled road kernels before the first screen asks (not on its first coup)."""
    board = Board.from_outcomes("BPPTB")
    board.to_dict()
    scoreboard_svg(board, ask="both", window=26)
