"""Server-rendered pages outside Dash: the kiosk screen, login, operator entry, audit trail.

These pages hold the writes, so they stay small and explicit: a session cookie (HttpOnly,
SameSite=Strict) from ``/login``, a CSRF token checked on every state-changing request
(double-submit on the login form, a per-session token in ``X-CSRF-Token`` afterwards), and a
role check on every action. The kiosk screen is a static shell that the push channel fills.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
from datetime import UTC, date, datetime
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, HTTPException, Request, WebSocket
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from dashboard.context import Context
from dashboard.i18n import LANGUAGES, labels, language
from dashboard.limits import SESSION_COOKIE, LoginBusy, LoginGate, form_fields, json_object
from roads.audit.bundle import Slice, export_bundle
from roads.audit.trail import audit_trail
from roads.auth import AuthError, RateLimited, Session
from roads.board import Board
from roads.errors import InputError
from roads.ingest.entry import canonical_fields
from roads.ingest.sources import from_operator
from roads.render.themes import THEMES
from roads.rules import PRESETS
from roads.tables import ACTION_PERMISSION, Actor

LOGIN_COOKIE = "roads_login_csrf"
LOGIN_FIELDS = 8


def _page(title: str, body: str, css: str = "app.css", script: str = "") -> HTMLResponse:
    js = f'<script src="/static/{script}" defer></script>' if script else ""
    return HTMLResponse(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<title>{escape(title)}</title><link rel="stylesheet" href="/static/{css}">{js}'
        f'</head><body>{body}</body></html>',
        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY",
                 "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                                            "style-src 'self' 'unsafe-inline'"})


def _session(ctx: Context, request: Request) -> Session | None:
    return ctx.auth.session(request.cookies.get(SESSION_COOKIE))


def _require(ctx: Context, request: Request, permission: str) -> Session:
    """The session of a state-changing request: logged in, CSRF token, permission."""
    session = _session(ctx, request)
    if session is None:
        raise HTTPException(401, "log in first")
    if not secrets.compare_digest(request.headers.get("x-csrf-token", ""), session.csrf):
        raise HTTPException(403, "missing or wrong CSRF token")
    if not session.can(permission):
        raise HTTPException(403, f"role {session.role} may not {permission.replace('_', ' ')}")
    return session


def operator_state(ctx: Context, table_id: str, session: Session) -> dict[str, Any]:
    state = ctx.service.table_state(table_id)
    return {"table_id": table_id, "state": state.status, "shoe_id": state.shoe_id,
            "seq": state.seq, "coups": len(state.coups), "user": session.user,
            "role": session.role, "can_approve": session.can("approve"),
            "last": [{k: c[k] for k in ("coup", "outcome", "player_cards", "banker_cards",
                                        "player_total", "banker_total", "player_pair",
                                        "banker_pair", "natural")}
                     for c in state.coups[-12:][::-1]],
            "pending": state.pending_corrections,
            "counts": Board.from_coups(state.coups).counts() if state.coups else None}


def web_router(ctx: Context) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    # -- the table-side screen --------------------------------------------------------------
    @router.get("/table/{table_id}")
    def screen(table_id: str, lang: str | None = None, theme: str | None = None
               ) -> HTMLResponse:
        lang = language(lang or ctx.site.language)
        theme = theme if theme in THEMES else ctx.site.theme
        options = "".join(
            f'<button class="lang{" on" if code == lang else ""}" data-lang="{code}">'
            f'{escape(name)}</button>' for code, name in LANGUAGES.items())
        body = (f'<div id="screen-root" data-table="{escape(table_id)}" data-lang="{lang}" '
                f'data-theme="{theme}" class="theme-{theme}" '
                f'style="--accent:{ctx.site.accent}">'
                f'<div id="screen-body"></div>'
                f'<div id="connection" hidden>{escape(labels(lang)["connecting"])}</div>'
                f'<nav id="languages">{options}</nav></div>')
        return _page(f"{table_id} — {ctx.site.casino}", body, "screen.css", "screen.js")

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

    def login_page(next: str, error: str = "", status: int = 200,
                   retry_after: int | None = None) -> HTMLResponse:
        token = secrets.token_urlsafe(24)
        note = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
        page = _page("Log in", (
            f'<main class="login"><h1>{escape(ctx.site.casino)}</h1>{note}'
            f'<form method="post" action="/login">'
            f'<input type="hidden" name="csrf" value="{token}">'
            f'<input type="hidden" name="next" value="{escape(next)}">'
            f'<label>User <input name="user" autocomplete="username" required autofocus>'
            f'</label><label>Password <input name="password" type="password" '
            f'autocomplete="current-password" required></label>'
            f'<button type="submit">Log in</button></form></main>'))
        page.status_code = status
        if retry_after is not None:
            page.headers["Retry-After"] = str(retry_after)
        page.set_cookie(LOGIN_COOKIE, token, httponly=True, samesite="strict", path="/login",
                        secure=secure)
        return page

    @router.get("/login")
    def login_form(next: str = "/", error: str = "") -> HTMLResponse:
        return login_page(next, error)

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
        if not cookie or not secrets.compare_digest(cookie, form.get("csrf", "")):
            return RedirectResponse(f"/login?next={quote(target)}&error="
                                    + quote("The form expired; please try again."), 303)
        address = request.client.host if request.client else ""
        user, password = form.get("user", ""), form.get("password", "")
        try:
            token, session = await gate.run(address, lambda: ctx.auth.login(user, password,
                                                                            address))
        except RateLimited as exc:
            return login_page(target, str(exc), 429, exc.retry_after)
        except LoginBusy as exc:
            return login_page(target, str(exc), 503, 1)
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

    # -- operator entry ---------------------------------------------------------------------
    @router.get("/operator/{table_id}")
    def operator(request: Request, table_id: str) -> Response:
        session = _session(ctx, request)
        if session is None:
            return RedirectResponse(f"/login?next={quote('/operator/' + table_id)}", 303)
        if not session.can("enter"):
            return _page("Not allowed", f'<main class="login"><h1>Not allowed</h1><p>Role '
                         f'{escape(session.role)} cannot enter coups.</p></main>')
        rules = "".join(f"<option>{escape(n)}</option>" for n in PRESETS)
        return _page(f"Operator — {table_id}", _OPERATOR.format(
            table=escape(table_id), csrf=session.csrf, user=escape(session.user),
            role=escape(session.role), rules=rules), script="operator.js")

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
                    **operator_state(ctx, table_id, session)}
        return {"ok": True, "message": message, **operator_state(ctx, table_id, session)}

    # -- audit trail (auditor) --------------------------------------------------------------
    @router.get("/audit")
    def audit(request: Request, table: str | None = None) -> Response:
        session = _session(ctx, request)
        if session is None:
            return RedirectResponse("/login?next=/audit", 303)
        if not session.can("audit"):
            raise HTTPException(403, "the audit trail is for auditors")
        rows = audit_trail(ctx.service.store, table or None)[-500:][::-1]
        cells = "".join(
            f"<tr><td>{r['seq']}</td><td>{escape(r['at'])}</td><td>{escape(r['kind'])}</td>"
            f"<td>{escape(r['table_id'])}</td><td>{escape(r['shoe_id'] or '')}</td>"
            f"<td>{escape(r['actor'] or '')}</td>"
            f"<td>{escape(json.dumps(r['details'], ensure_ascii=False))}</td></tr>"
            for r in rows)
        return _page("Audit trail", f'<main class="audit"><h1>Audit trail</h1>'
                     f'<p><a href="/audit/export">Export a bundle</a></p><table>'
                     f'<tr><th>#</th><th>When (UTC)</th><th>Action</th><th>Table</th>'
                     f'<th>Shoe</th><th>Who</th><th>Details</th></tr>{cells}</table></main>')

    @router.get("/audit/export")
    def export_form(request: Request, error: str = "") -> Response:
        session = _session(ctx, request)
        if session is None:
            return RedirectResponse("/login?next=/audit/export", 303)
        if not session.can("audit"):
            raise HTTPException(403, "exports are for auditors")
        note = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
        tables = "".join(f"<option>{escape(t)}</option>" for t in ctx.table_ids())
        return _page("Export", _EXPORT.format(note=note, csrf=session.csrf, tables=tables))

    @router.post("/audit/export")
    async def export(request: Request) -> Response:
        session = _session(ctx, request)
        if session is None:
            raise HTTPException(401, "log in first")
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        if not secrets.compare_digest(form.get("csrf", ""), session.csrf):
            raise HTTPException(403, "missing or wrong CSRF token")
        if not session.can("audit"):
            raise HTTPException(403, "exports are for auditors")
        try:
            archive = await run_in_threadpool(_export_zip, ctx, form, session.user)
        except (InputError, ValueError) as exc:
            return RedirectResponse(f"/audit/export?error={quote(str(exc))}", 303)
        return FileResponse(archive, media_type="application/zip",
                            filename=archive.name,
                            background=BackgroundTask(shutil.rmtree, archive.parent))

    return router


def _export_zip(ctx: Context, form: dict[str, str], user: str) -> Path:
    """Build a bundle in a private temporary directory and zip it (the export is journaled
    by :func:`export_bundle` with the auditor's name)."""
    def day(key: str) -> date | None:
        return date.fromisoformat(form[key]) if form.get(key) else None
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


def _act(ctx: Context, table_id: str, kind: str, data: dict[str, Any], user: Actor) -> str:
    """Run one operator action through the live-table service (as the API does)."""
    service = ctx.service
    if kind == "preview":
        p = canonical_fields(from_operator(data))
        return f"{p['outcome']} {p['player_total']}-{p['banker_total']}"
    if kind == "coup":
        event, _ = service.enter_coup(user, table_id, from_operator(data))
        return f"coup {event.payload['coup']}: {event.payload['outcome']}"
    if kind == "open_shoe":
        shoe_id = str(data.get("shoe_id") or "").strip() or \
            datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        service.open_shoe(user, table_id, shoe_id, str(data.get("rules") or "standard-8"))
        return f"shoe {shoe_id} opened"
    if kind == "close_shoe":
        closed, _ = service.close_shoe(user, table_id)
        return f"shoe {closed.shoe_id} closed and sealed"
    if kind == "close_table":
        service.close_table(user, table_id)
        return "table closed"
    if kind == "ask":
        outcome = "B" if data.get("outcome") == "B" else "P"
        return f"asked {outcome}? on {ctx.hub.ask(table_id, outcome)} screens"
    if kind == "request_correction":
        amend = data.get("outcome") or data.get("player_cards")
        event = service.request_correction(
            user, table_id, str(data["shoe_id"]), int(data["coup"]),
            str(data.get("reason", "")), from_operator(data) if amend else None)
        return f"correction of coup {event.payload['coup']} requested (#{event.seq})"
    approve = kind == "approve"
    event = service.decide_correction(user, int(data["request"]), approve,
                                      str(data.get("note", "")))
    return f"request #{data['request']} {'approved' if approve else 'rejected'} ({event.kind})"


_EXPORT = """
<main class="login"><h1>Compliance export</h1>{note}
<form method="post" action="/audit/export">
<input type="hidden" name="csrf" value="{csrf}">
<label>Table <select name="table"><option value="">all tables</option>{tables}</select></label>
<label>Shoe <input name="shoe"></label>
<label>Day (UTC) <input name="date" type="date"></label>
<label>From <input name="from" type="date"></label>
<label>To <input name="to" type="date"></label>
<label><input type="checkbox" name="pdf" value="1" checked> PDF report</label>
<label><input type="checkbox" name="xlsx" value="1"> XLSX workbook</label>
<label>Page <select name="page"><option>A4</option><option>Letter</option></select></label>
<button type="submit">Export bundle (zip)</button></form>
<p>CSV, Parquet and manifest.json are always included; check it with
<code>roads verify</code>.</p></main>
"""

_OPERATOR = """
<div id="operator" data-table="{table}" data-csrf="{csrf}">
<header><h1>Table {table}</h1><span id="op-status" aria-live="polite"></span>
<span class="who">{user} ({role})</span><button id="logout" type="button">Log out</button>
</header>
<main class="op">
<section class="keypad" aria-label="Keypad">
  <div class="outcomes">
    <button class="k-B" data-outcome="B" title="Banker (1 or B)">Banker <kbd>1</kbd></button>
    <button class="k-P" data-outcome="P" title="Player (2 or P)">Player <kbd>2</kbd></button>
    <button class="k-T" data-outcome="T" title="Tie (3 or T)">Tie <kbd>3</kbd></button>
  </div>
  <div class="toggles">
    <button data-toggle="player_pair" aria-pressed="false">P pair <kbd>4</kbd></button>
    <button data-toggle="banker_pair" aria-pressed="false">B pair <kbd>5</kbd></button>
    <button data-toggle="natural" aria-pressed="false">Natural <kbd>6</kbd></button>
  </div>
  <div class="pending-entry">Entry: <output id="entry">—</output></div>
  <div class="confirm">
    <button id="confirm" class="primary">Confirm <kbd>Enter</kbd></button>
    <button id="clear">Clear <kbd>Esc</kbd></button>
  </div>
  <form id="cards-form" class="cards" autocomplete="off">
    <label>Player cards <input id="player-cards" placeholder="9h Kd"></label>
    <label>Banker cards <input id="banker-cards" placeholder="2c 3s 5d"></label>
    <output id="card-preview"></output>
    <button type="submit">Enter by cards</button>
  </form>
  <div class="ask"><button data-ask="B">Ask B? <kbd>7</kbd></button>
  <button data-ask="P">Ask P? <kbd>8</kbd></button></div>
</section>
<section class="shoe" aria-label="Shoe">
  <div class="shoe-controls">
    <label>Shoe id <input id="shoe-id" placeholder="auto"></label>
    <label>Rules <select id="rules">{rules}</select></label>
    <button id="open-shoe">Open shoe</button>
    <button id="close-shoe">Close shoe</button>
    <button id="close-table">Close table</button>
  </div>
  <h2>Last coups</h2><table id="last"></table>
  <h2>Corrections waiting for a supervisor</h2><table id="pending"></table>
</section>
</main>
<div id="message" role="status" aria-live="assertive"></div>
</div>
"""
