"""The server: one FastAPI application carrying the Dash dashboard, the table-side screens'
push channel, operator entry, the HTTP API and ``/health`` (served by uvicorn).

In front of every route, outermost first: security headers on every response
(:mod:`dashboard.headers`), the client address from ``X-Forwarded-For`` only when the peer
is a configured trusted proxy, and the request limits (:mod:`dashboard.limits`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from html import escape
from pathlib import Path
from typing import Any

from dash import Dash
from dash.exceptions import DependencyException
from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from dashboard.api import api_router, health, install_errors
from dashboard.config import SiteConfig
from dashboard.context import Context
from dashboard.headers import SecurityHeaders, content_security_policy
from dashboard.limits import RequestLimits, json_object
from dashboard.pages import register, shell
from dashboard.web import web_router
from roads.auth import Auth
from roads.board import Board, compiled_machine
from roads.errors import (
    RETRY_AFTER_SECONDS,
    InputError,
    JournalBusy,
    SigningKeyMismatch,
    SigningRefused,
    UnsignedCommit,
)
from roads.render import scoreboard_svg
from roads.tomlfile import field_error

HERE = Path(__file__).parent
_log = logging.getLogger(__name__)
CALLBACK_PATH = "/_dash-update-component"
#: How often refused logins of ended windows are journaled (besides at each login).
REFUSALS_FLUSH_SECONDS = 15.0
#: How long after its start a server loads the kernels (:func:`warm_up`) on a thread: the
#: first worker of ``roads serve`` is forked before they are loaded, and loading them (~0.6 s
#: of CPU, holding the GIL half the time) beside its first pages made a screen's first state
#: wait 0.15-0.3 s longer. Boards run on the plain machine until then (the same bytes).
KERNELS_AFTER_SECONDS = 2.0
#: Errors a callback raises on values the browser sent (a forged date, a dict for a table
#: id): 400 naming the problem. Anything else is a bug and stays a 500 with its traceback.
BAD_VALUES = (InputError, ValueError, TypeError, KeyError, IndexError,
              sqlite3.ProgrammingError, sqlite3.InterfaceError)


def create_app(root: Path, site: SiteConfig | None = None, create: bool = True,
               recover: bool = True, registry: Path | None = None) -> tuple[Dash, Context]:
    """The Dash app (``app.server`` is the FastAPI application) and its shared context
    (``create``: make the store when there is none; ``recover``: seal what a crash left
    unsealed — once per server, not per worker; ``registry``: the screen registry the
    server's workers share, see :mod:`dashboard.workers`)."""
    ctx = Context.open(root, site or SiteConfig(), create, recover, registry)
    # update_title=None: a kiosk never shows "Updating..." in its title (typed as str).
    # The title is written into the page as it is: escape the configured name.
    app = Dash(__name__, backend="fastapi", title=escape(ctx.site.casino),
               update_title=None,  # type: ignore[arg-type]
               serve_locally=True, suppress_callback_exceptions=True,
               assets_folder=str(HERE / "assets"), on_error=_callback_error)
    server: Any = app.server
    server.title = "Baccarat Roads API"
    server.add_api_route("/health", lambda: health(ctx), methods=["GET"], tags=["health"])
    server.include_router(api_router(ctx))
    server.include_router(web_router(ctx))
    server.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    install_errors(server)
    server.add_exception_handler(DependencyException, _no_such_component_file)
    server.add_exception_handler(JournalBusy, _journal_busy)
    server.add_exception_handler(SigningRefused, _signing_key_mismatch)
    server.add_exception_handler(UnsignedCommit, _unsigned_commit)
    server.add_exception_handler(sqlite3.OperationalError, _database_locked)
    app.layout = shell(ctx)
    register(app, ctx)
    # Dash's FastAPI backend sets itself up (the assets' stylesheets) on the first request
    # to "/" or "/_dash-*" only: a first visit to /tables/<id> got the page without its CSS.
    app._setup_server()  # type: ignore[no-untyped-call]
    # Added last = run first: headers, then the client's address, then the limits.
    server.add_middleware(RequestLimits, auth=ctx.auth, limits=ctx.site.limits,
                          checks={CALLBACK_PATH: callback_check(app)})
    server.add_middleware(ProxyHeadersMiddleware, trusted_hosts=ctx.site.trusted_proxies)
    server.add_middleware(SecurityHeaders, policy=content_security_policy(app.csp_hashes()),
                          https=ctx.site.https)
    server.router.lifespan_context = _journaling_refusals(server.router.lifespan_context,
                                                          ctx.auth)
    return app, ctx


def warm_up() -> None:
    """Load the compiled road kernels before the screens ask (not on a table's first coup),
    and what a shoe's first seal would otherwise import in a request thread: Arrow for the
    shoe's digests, the checkpoint's signing (seen: ~3 s of one worker's first 15 s of a
    busy floor, every table of that worker waiting). ``roads serve`` runs it once before
    forking the workers after the first, which share what it loads; every server runs it
    again on a thread soon after it starts (:func:`_journaling_refusals`), where it costs
    nothing if it ran before the fork. Until the kernels are loaded, boards run on the plain
    machine (the same bytes), so nothing waits for them."""
    import pyarrow  # noqa: F401
    from cryptography.hazmat.primitives.serialization import (  # noqa: F401
        load_pem_private_key,
    )

    compiled_machine()  # a short board alone would run as plain Python
    board = Board.from_outcomes("BPPTB")
    board.to_dict()
    scoreboard_svg(board, ask="both", window=26)


Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


def _journaling_refusals(previous: Lifespan, auth: Auth) -> Lifespan:
    """The app's lifespan, journaling refused logins every few seconds and at shutdown (so
    the last window of a flood is recorded even when no login follows it), and loading the
    compiled kernels on a thread soon after the server starts (:func:`warm_up`,
    :data:`KERNELS_AFTER_SECONDS`)."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async def every_window() -> None:
            while True:
                await asyncio.sleep(REFUSALS_FLUSH_SECONDS)
                with suppress(JournalBusy):  # (a hung writer: the next window tries again;
                    await run_in_threadpool(auth.flush_refusals)  # raised, it ended the task)

        task = asyncio.create_task(every_window())
        kernels = threading.Timer(KERNELS_AFTER_SECONDS, warm_up)
        kernels.name, kernels.daemon = "kernels", True
        kernels.start()
        try:
            async with previous(app) as state:
                yield state
        finally:
            kernels.cancel()
            task.cancel()
            with suppress(JournalBusy):  # (a hung writer at shutdown: stop all the same;
                auth.flush_refusals(force=True)  # the counts stay in logins.sqlite)

    return lifespan


# -- bad input to Dash's own routes ----------------------------------------------------------
class _Prop(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str | dict[str, Any]
    property: str


class CallbackRequest(BaseModel):
    """The shape of a Dash callback request; the values themselves are the callbacks'."""

    model_config = ConfigDict(extra="allow")
    output: str
    outputs: _Prop | list[_Prop | list[_Prop]]
    inputs: list[_Prop | list[_Prop]]
    state: list[_Prop | list[_Prop]] = []
    changedPropIds: list[str] = []  # Dash's name for it


def callback_check(app: Dash) -> Callable[[bytes], str | None]:
    """What is wrong with a callback request body (None when Dash can dispatch it)."""

    def check(body: bytes) -> str | None:
        try:
            request = CallbackRequest.model_validate(json_object(body, "the update request"))
        except ValidationError as exc:  # (a ValueError too: caught first)
            return f"the update request: {field_error(exc)}"
        except ValueError as exc:
            return str(exc)
        if request.output not in app.callback_map:
            return f"the update request names no callback of this page: {request.output!r}"
        return None

    return check


def _callback_error(error: Exception) -> None:
    """Dash's ``on_error``: a value the browser sent that a callback cannot use is the
    client's error (400), not the server's; a store too busy to read (SQLite's lock held
    past its busy timeout) is a 503 to be tried again, as a busy write is, not a 500."""
    if isinstance(error, BAD_VALUES):
        raise HTTPException(400, f"this page cannot use a value it sent: {error}")
    if _locked(error):
        raise _store_busy(error) from error
    raise error


def _locked(error: BaseException) -> bool:
    """Whether ``error`` is SQLite's "database is locked": another process holds the lock
    (``SQLITE_BUSY``). Not "table is locked" (``SQLITE_LOCKED``): that is a conflict inside
    one connection, a bug of ours, and stays a 500 with its traceback."""
    return isinstance(error, sqlite3.OperationalError) and \
        getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY


def _store_busy(error: BaseException) -> JournalBusy:
    """A read or page update that met a held SQLite lock, as the busy write it is like."""
    return JournalBusy(f"the store is busy: another process holds its database locked "
                       f"({error}); try again shortly", RETRY_AFTER_SECONDS)


async def _database_locked(request: Request, exc: Exception) -> JSONResponse:
    """A read of any route behind a held SQLite lock: 503 as :func:`_journal_busy`; any
    other operational error stays the server's (500)."""
    if not _locked(exc):
        raise exc
    return await _journal_busy(request, _store_busy(exc))


async def _journal_busy(request: Request, exc: Exception) -> JSONResponse:
    """A write behind a hung writer: 503, to be tried again (any route that writes)."""
    assert isinstance(exc, JournalBusy)
    _log.warning("503 for %s %s: %s", request.method, request.url.path, exc)
    return JSONResponse({"detail": exc.public}, status_code=503,
                        headers={"Retry-After": str(exc.retry_after)})


async def _signing_key_mismatch(request: Request, exc: Exception) -> JSONResponse:
    """A write whose signature the store's key would not verify: refused before it wrote,
    the server's fault (500), naming the key file (relative to the store) in one line."""
    assert isinstance(exc, SigningRefused)
    if not isinstance(exc, SigningKeyMismatch):  # (a journal rewritten behind its checkpoints)
        return JSONResponse({"detail": f"the store cannot sign this write: {exc}"},
                            status_code=500)
    return JSONResponse({"detail": f"the store cannot sign this write: its signing key "
                                   f"{exc.key_file} is not the one its public key names; "
                                   "the operator must put back the store's key"},
                        status_code=500)


async def _unsigned_commit(request: Request, exc: Exception) -> JSONResponse:
    """A write the journal committed whose checkpoint could not then be written: done (a
    retry would find it there), unsigned until the next write signs it; the server's fault
    (500), saying both in one line."""
    return JSONResponse({"detail": str(exc)}, status_code=500)


async def _no_such_component_file(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"detail": f"no such dashboard component file: {request.url.path}"},
                        status_code=404)
