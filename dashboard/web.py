"""Server-rendered pages outside Dash: the kiosk screen, login, operator entry, history, the
audit trail and its export.

These pages hold the writes, so they stay small and explicit: a session cookie (HttpOnly,
SameSite=Strict) from ``/login``, a CSRF token checked on every state-changing request
(double-submit on the login form, a per-session token in ``X-CSRF-Token`` afterwards), and a
role check on every action. Every page comes from a Jinja2 template in ``templates/`` with
autoescape on (a name, a table id or an error message is always text, never markup); the
security headers come from the middleware (:mod:`dashboard.headers`). The kiosk screen is a
static shell that the push channel fills.
"""

from __future__ import annotations

import base64
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, HTTPException, Request, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from dashboard.audit_page import AuditQuery, audit_view
from dashboard.context import Context
from dashboard.history_page import HistoryQuery, history_view
from dashboard.i18n import LANGUAGES, labels, language
from dashboard.limits import (
    SESSION_COOKIE,
    LoginBusy,
    LoginGate,
    form_fields,
    json_object,
    same_token,
)
from dashboard.listing import FilterError
from dashboard.pages import NAVIGATION
from roads.audit.bundle import Slice, export_bundle
from roads.audit.trail import change_words, coup_words, flag_words, plural
from roads.auth import AuthError, RateLimited, Session
from roads.board import Board
from roads.errors import InputError
from roads.ingest.entry import EntryError, canonical_fields
from roads.ingest.sources import from_operator
from roads.render import road_svg
from roads.render.themes import THEMES
from roads.rules import PRESETS
from roads.schema import same_coup
from roads.tables import ACTION_PERMISSION, Actor, TableState

LOGIN_COOKIE = "roads_login_csrf"
LOGIN_FIELDS = 8
#: The export form's fields (what a refused export hands back to the form).
EXPORT_FIELDS = ("table", "shoe", "date", "from", "to", "pdf", "xlsx", "page")
#: Fields an export form may post (its own, the CSRF token, room for a browser's blanks).
EXPORT_FORM_FIELDS = 32
#: Columns of the operator screen's mini Big Road: the newest of the shoe.
MINI_ROAD_COLUMNS = 24

TEMPLATES = Jinja2Templates(env=Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True,
    undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True))
#: Stylesheets: the floor's pages (login, operator) and the dashboard's own look.
FLOOR_CSS = ("/static/app.css",)
SITE_CSS = ("/assets/dashboard.css",)


def render(request: Request, template: str, title: str, status: int = 200,
           stylesheets: tuple[str, ...] = FLOOR_CSS, script: str = "",
           **context: Any) -> HTMLResponse:
    """A page from its template, never cached (pages carry CSRF tokens and what one
    session may see)."""
    return TEMPLATES.TemplateResponse(
        request, template, {"title": title, "stylesheets": stylesheets, "script": script,
                            **context}, status_code=status, headers={"Cache-Control": "no-store"})


def _session(ctx: Context, request: Request) -> Session | None:
    return ctx.auth.session(request.cookies.get(SESSION_COOKIE))


def _require(ctx: Context, request: Request, permission: str) -> Session:
    """The session of a state-changing request: logged in, CSRF token, permission."""
    session = _session(ctx, request)
    if session is None:
        raise HTTPException(401, "log in first")
    if not same_token(request.headers.get("x-csrf-token", ""), session.csrf):
        raise HTTPException(403, "missing or wrong CSRF token")
    if not session.can(permission):
        raise HTTPException(403, f"role {session.role} may not {permission.replace('_', ' ')}")
    return session


def _status(state: TableState) -> str:
    if state.status == "open":
        return f"Shoe {state.shoe_id} — {plural(len(state.coups), 'coup')}"
    return f"No open shoe ({state.status.replace('_', ' ')})"


def _mini_road(board: Board) -> str:
    """The shoe's Big Road as a base64 SVG (an image: one element, whatever the shoe)."""
    svg = road_svg(board, "big_road", theme="dark", window=MINI_ROAD_COLUMNS, ask=None)
    return base64.b64encode(svg.encode()).decode()


def _asked(request: dict[str, Any], now: dict[str, Any] | None) -> str:
    """A waiting correction in words: "Player → Tie", or "void (it is Banker)"."""
    if request["action"] != "void":
        return change_words(now, request["new"])
    return f"void (it is {coup_words(now)})" if now is not None else "void"


_COUP_FIELDS = ("coup", "outcome", "player_cards", "banker_cards", "player_total",
                "banker_total", "player_pair", "banker_pair", "natural")


def operator_state(ctx: Context, table_id: str, session: Session) -> dict[str, Any]:
    """What the operator screen draws: the table, its newest coups and waiting corrections
    in words, and the mini Big Road."""
    state = ctx.service.table_state(table_id)
    board = Board.from_coups(state.coups) if state.coups else None
    by_number = {c["coup"]: c for c in state.coups}
    pending = [{**p, "words": _asked(p, by_number.get(p["coup"]))}
               for p in state.pending_corrections]
    return {"table_id": table_id, "state": state.status, "shoe_id": state.shoe_id,
            "seq": state.seq, "coups": len(state.coups), "status": _status(state),
            "user": session.user, "role": session.role, "can_approve": session.can("approve"),
            "last": [{**{k: c[k] for k in _COUP_FIELDS}, "words": coup_words(c),
                      "flags": flag_words(c)} for c in state.coups[-12:][::-1]],
            "pending": pending, "road": _mini_road(board) if board else None,
            "counts": board.counts() if board else None}


def _query(request: Request) -> dict[str, str]:
    return dict(request.query_params)


def web_router(ctx: Context) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    def site_page(request: Request, template: str, title: str, here: str,
                  session: Session | None, status: int = 200, **context: Any) -> HTMLResponse:
        """A page of the dashboard's own look, with the site's navigation."""
        return render(request, template, f"{title} — {ctx.site.casino}", status, SITE_CSS,
                      casino=ctx.site.casino, navigation=NAVIGATION, here=here,
                      user=session.user if session else None, **context)

    # -- the table-side screen --------------------------------------------------------------
    @router.get("/table/{table_id}")
    def screen(request: Request, table_id: str, lang: str | None = None,
               theme: str | None = None) -> HTMLResponse:
        lang = language(lang or ctx.site.language)
        theme = theme if theme in THEMES else ctx.site.theme
        return render(request, "screen.html", f"{table_id} — {ctx.site.casino}",
                      stylesheets=("/static/screen.css",), script="screen.js",
                      table_id=table_id, lang=lang, theme=theme, accent=ctx.site.accent,
                      languages=LANGUAGES, connecting=labels(lang)["connecting"])

    @router.websocket("/ws/tables/{table_id}")
    async def push(socket: WebSocket, table_id: str, lang: str = "en",
                   theme: str = "") -> None:
        await ctx.hub.serve(socket, table_id, language(lang),
                            theme if theme in THEMES else ctx.site.theme)

    @router.get("/brand/logo")
    def logo() -> FileResponse:
        if ctx.site.logo is None:
            raise HTTPException(404, "no logo configured")
        return FileResponse(ctx.site.logo)

    # -- login ------------------------------------------------------------------------------
    gate = LoginGate(ctx.site.limits.login_workers, ctx.site.limits.login_queue)
    secure = ctx.site.https

    def login_page(request: Request, next: str, error: str = "", status: int = 200,
                   retry_after: int | None = None) -> HTMLResponse:
        token = secrets.token_urlsafe(24)
        page = render(request, "login.html", "Log in", status, casino=ctx.site.casino,
                      error=error, token=token, next=next)
        if retry_after is not None:
            page.headers["Retry-After"] = str(retry_after)
        page.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", path="/login",
                        secure=secure)
        return page

    @router.get("/login")
    def login_form(request: Request, next: str = "/", error: str = "") -> HTMLResponse:
        return login_page(request, next, error)

    @router.post("/login")
    async def login(request: Request) -> Response:
        try:
            form = form_fields(await request.body(), "the login form", LOGIN_FIELDS)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        target = form.get("next", "/")
        if not target.startswith("/") or target.startswith("//"):
            target = "/"  # no open redirects
        cookie = request.cookies.get(LOGIN_COOKIE, "")
        if not cookie or not same_token(form.get("csrf", ""), cookie):
            return RedirectResponse(f"/login?next={quote(target)}&error="
                                    + quote("The form expired; please try again."), 303)
        address = request.client.host if request.client else ""
        user, password = form.get("user", ""), form.get("password", "")
        try:
            token, session = await gate.run(address, lambda: ctx.auth.login(user, password,
                                                                            address))
        except RateLimited as exc:
            return login_page(request, target, str(exc), 429, exc.retry_after)
        except LoginBusy as exc:
            return login_page(request, target, str(exc), 503, 1)
        except AuthError as exc:  # wrong credentials
            return RedirectResponse(f"/login?next={quote(target)}&error={quote(str(exc))}",
                                    303)
        response = RedirectResponse(target, 303)
        response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict",
                            secure=secure, max_age=int((session.expires_at - datetime.now(UTC))
                                                       .total_seconds()))
        response.delete_cookie(LOGIN_COOKIE, path="/login", secure=secure, httponly=True,
                               samesite="strict")
        return response

    @router.post("/logout")
    def logout(request: Request) -> Response:
        session = _require(ctx, request, "read")
        ctx.auth.logout(request.cookies.get(SESSION_COOKIE, ""))
        response = JSONResponse({"user": session.user, "logged_out": True})
        response.delete_cookie(SESSION_COOKIE, secure=secure, httponly=True, samesite="strict")
        return response

    def not_allowed(request: Request, message: str, status: int = 403) -> HTMLResponse:
        return render(request, "message.html", "Not allowed", status, heading="Not allowed",
                      message=message, link=("All tables", "/"))

    # -- operator entry ---------------------------------------------------------------------
    @router.get("/operator/{table_id}")
    def operator(request: Request, table_id: str) -> Response:
        session = _session(ctx, request)
        if session is None:
            return RedirectResponse(f"/login?next={quote('/operator/' + table_id)}", 303)
        if not session.can("enter"):
            # A page that answers the login it followed, not a failed request.
            return not_allowed(request, f"Role {session.role} cannot enter coups.", 200)
        return render(request, "operator.html", f"Operator — {table_id}",
                      script="operator.js", table=table_id, csrf=session.csrf,
                      user=session.user, role=session.role,
                      rules=[*PRESETS, *ctx.site.rule_sets])

    @router.get("/operator/{table_id}/state")
    def operator_json(request: Request, table_id: str) -> dict[str, Any]:
        session = _session(ctx, request)
        if session is None or not session.can("enter"):
            raise HTTPException(401 if session is None else 403, "not allowed")
        return operator_state(ctx, table_id, session)

    @router.post("/operator/{table_id}/action")
    async def action(request: Request, table_id: str) -> dict[str, Any]:
        try:
            data = json_object(await request.body(), "the action")
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        kind = str(data.get("action", ""))
        service_action = _ACTIONS.get(kind)
        if service_action is None:
            raise HTTPException(422, f"unknown action {kind!r}")
        session = _require(ctx, request, ACTION_PERMISSION[service_action])
        user = Actor.user(session.user, session.role)
        # A refusal by the rules of the game (impossible coup, no open shoe) is an answer,
        # not a failed request: 200 with ok false, so the screen shows it in words.
        try:
            message = _act(ctx, table_id, kind, data, user)
        except (InputError, KeyError, ValueError, TypeError) as exc:
            return {"ok": False, "detail": str(exc).strip('"'),
                    "field": getattr(exc, "field", None),
                    **operator_state(ctx, table_id, session)}
        return {"ok": True, "message": message, **operator_state(ctx, table_id, session)}

    # -- history (anyone) -------------------------------------------------------------------
    @router.get("/history")
    def history(request: Request) -> HTMLResponse:
        session = _session(ctx, request)
        try:
            query = HistoryQuery.parse(_query(request))
        except FilterError as exc:
            view = history_view(ctx, HistoryQuery())
            return site_page(request, "history.html", "History", "/history", session, 400,
                             **{**view, "values": _query(request)}, error=str(exc))
        return site_page(request, "history.html", "History", "/history", session,
                         **history_view(ctx, query), error="")

    # -- audit trail (auditor) --------------------------------------------------------------
    def auditor(request: Request, here: str, what: str) -> Session | Response:
        session = _session(ctx, request)
        if session is None:
            return RedirectResponse(f"/login?next={quote(here)}", 303)
        if not session.can("audit"):
            return not_allowed(request, f"{what} is for auditors; role {session.role} "
                                        "cannot see it.")
        return session

    @router.get("/audit")
    def audit(request: Request) -> Response:
        session = auditor(request, "/audit", "The audit trail")
        if isinstance(session, Response):
            return session
        try:
            query = AuditQuery.parse(_query(request))
        except FilterError as exc:
            view = audit_view(ctx, AuditQuery())
            return site_page(request, "audit.html", "Audit trail", "/audit", session, 400,
                             **{**view, "values": _query(request), "rows": []},
                             csrf=session.csrf, error=str(exc))
        return site_page(request, "audit.html", "Audit trail", "/audit", session,
                         **audit_view(ctx, query), csrf=session.csrf, error="")

    @router.get("/audit/export")
    def export_form(request: Request, error: str = "") -> Response:
        session = auditor(request, "/audit/export", "The compliance export")
        if isinstance(session, Response):
            return session
        values = {k: v for k, v in request.query_params.items() if k in EXPORT_FIELDS}
        return site_page(request, "export.html", "Compliance export", "/audit", session,
                         error=error, csrf=session.csrf, tables=ctx.table_ids(),
                         values=values)

    @router.post("/audit/export")
    async def export(request: Request) -> Response:
        session = _session(ctx, request)
        if session is None:
            raise HTTPException(401, "log in first")
        try:
            form = form_fields(await request.body(), "the export form", EXPORT_FORM_FIELDS)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        if not same_token(form.get("csrf", ""), session.csrf):
            raise HTTPException(403, "missing or wrong CSRF token")
        if not session.can("audit"):
            raise HTTPException(403, "exports are for auditors")
        try:
            archive = await run_in_threadpool(_export_zip, ctx, form, session.user)
        except (InputError, ValueError) as exc:
            typed = {k: v for k, v in form.items() if k in EXPORT_FIELDS}
            return RedirectResponse(
                f"/audit/export?{urlencode({**typed, 'error': str(exc)})}", 303)
        return FileResponse(archive, media_type="application/zip",
                            filename=archive.name,
                            background=BackgroundTask(shutil.rmtree, archive.parent))

    return router


def _export_zip(ctx: Context, form: dict[str, str], user: str) -> Path:
    """Build a bundle in a private temporary directory and zip it (the export is journaled
    by :func:`export_bundle` with the auditor's name)."""
    def day(key: str) -> date | None:
        try:
            return date.fromisoformat(form[key]) if form.get(key) else None
        except ValueError:
            raise InputError(f"{key}: {form[key]!r} is not a day (YYYY-MM-DD)") from None
    what = Slice(form.get("table") or None, form.get("shoe") or None, day("date"),
                 day("from"), day("to"))
    if not (what.shoe_id or what.day or what.start or what.end):
        raise InputError("choose a shoe, a table-day or a date range")
    formats = tuple(f for f in ("pdf", "xlsx") if form.get(f))
    work = Path(tempfile.mkdtemp(prefix="roads-export-"))
    try:
        bundle = work / "bundle"
        manifest = export_bundle(ctx.service.store, what, bundle, user, formats=formats,
                                 page_format=form.get("page", "A4"), casino=ctx.site.casino)
        name = f"roads-export-{manifest['data_digest'][:12]}"
        return Path(shutil.make_archive(str(work / name), "zip", bundle))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


#: Operator screen actions -> the service action (and so the permission) they need.
_ACTIONS = {"coup": "enter_coup", "open_shoe": "open_shoe", "close_shoe": "close_shoe",
            "close_table": "close_table", "ask": "ask", "preview": "preview",
            "request_correction": "request_correction", "approve": "decide_correction",
            "reject": "decide_correction"}


def _number(data: Mapping[str, Any], name: str, what: str) -> int:
    """A whole number the screen sent (``coup``, ``request``), or an error naming it."""
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int | str) or \
            not str(value).strip().isdigit() or len(str(value).strip()) > 18:
        # more than 18 digits: beyond any journal sequence or coup (the database would
        # raise on it, a 500); also keeps int() off thousands of digits
        raise EntryError(name, f"{value!r} is not a {what}")
    return int(value)


def _act(ctx: Context, table_id: str, kind: str, data: dict[str, Any], user: Actor) -> str:
    """Run one operator action through the live-table service (as the API does); the
    answer is a sentence for the screen."""
    service = ctx.service
    if kind == "preview":
        return f"By the tableau: {coup_words(canonical_fields(from_operator(data)))}"
    if kind == "coup":
        event, _ = service.enter_coup(user, table_id, from_operator(data))
        return f"Coup {event.payload['coup']} entered: {coup_words(event.payload)}"
    if kind == "open_shoe":
        shoe_id = str(data.get("shoe_id") or "").strip() or \
            datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        service.open_shoe(user, table_id, shoe_id, str(data.get("rules") or "standard-8"))
        return f"Shoe {shoe_id} opened"
    if kind == "close_shoe":
        closed, _ = service.close_shoe(user, table_id)
        return f"Shoe {closed.shoe_id} closed and sealed"
    if kind == "close_table":
        service.close_table(user, table_id)
        return "Table closed"
    if kind == "ask":
        outcome = "B" if data.get("outcome") == "B" else "P"
        return f"Asked {outcome}? on {plural(ctx.hub.ask(table_id, outcome), 'screen')}"
    if kind == "request_correction":
        return _request_correction(ctx, table_id, data, user)
    approve = kind == "approve"
    request = _number(data, "request", "correction request number")
    event = service.decide_correction(user, request, approve, str(data.get("note") or ""))
    coup = event.payload["coup"]
    done = {"coup_voided": f"coup {coup} voided", "coup_amended": f"coup {coup} amended",
            "correction_rejected": f"coup {coup} stays as it was"}[event.kind]
    return f"Request #{request} {'approved' if approve else 'rejected'}: {done}"


def _request_correction(ctx: Context, table_id: str, data: dict[str, Any],
                        user: Actor) -> str:
    """A void or an amendment asked for from the correction form: which coup, then the
    reason (refused before the correction itself is looked at), then what to change."""
    coup = _number(data, "coup", "coup number")
    shoe_id = str(data.get("shoe_id") or "")
    if not shoe_id:
        raise EntryError("shoe_id", "no shoe named: which shoe holds the coup?")
    reason = str(data.get("reason") or "").strip()
    if not reason:
        raise EntryError("reason", "give the reason for the correction first")
    correction = data.get("correction") or (
        "amend" if data.get("outcome") or data.get("player_cards") else "void")
    if correction not in ("void", "amend"):
        raise EntryError("correction", "choose void or amend")
    amended = from_operator(data) if correction == "amend" else None
    if amended is not None:
        now = [c for c in ctx.service.shoe_coups(table_id, shoe_id) if c["coup"] == coup]
        if now and same_coup(now[0], canonical_fields(amended)):
            raise EntryError("correction", f"coup {coup} is already {coup_words(now[0])}: "
                                           "change the outcome, a pair, natural or the cards")
    event = ctx.service.request_correction(user, table_id, shoe_id, coup, reason, amended)
    what = "void" if amended is None else f"amend to {coup_words(event.payload['new'])}"
    return (f"Correction of coup {coup} requested (#{event.seq}: {what}); "
            "waiting for a supervisor")
