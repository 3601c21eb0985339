"""The HTTP API for card-reading shoes, table systems and people (OpenAPI at
``/openapi.json``): a thin shell over the live-table service.

Reads are open (they show what the table screens show). Writes need one of:
``Authorization: Bearer rk_…`` (a table's API key: open, enter, close at that table only),
``Authorization: Bearer rt_…`` (a user's personal token, ``roads users token NAME``: that
user's role), or a browser session cookie with its ``X-CSRF-Token`` header. None or an unknown
credential is 401; one that may not do this is 403. A payload that does not fit is 422 naming
the field; a state the table does not allow (no open shoe, a coup out of order, a decided
request) is 409; posting a coup that is already stored is idempotent (200, ``created: false``).
"""


from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from dashboard.context import Context
from dashboard.limits import same_token
from roads.board import Board
from roads.errors import InputError
from roads.ingest.sources import CorrectionIn, CoupIn, DecisionIn, ShoeIn, from_api
from roads.tables import (
    Actor,
    CoupConflict,
    EntryError,
    Forbidden,
    LiveError,
    TableState,
)

SESSION_COOKIE = "roads_session"
#: The largest journal sequence number (SQLite's integer): a request number beyond it is
#: refused as a 422 naming it, not sent to the database (which raised: a 500).
JOURNAL_SEQ_MAX = 2**63 - 1


def refused(exc: InputError, field: str | None = None) -> Exception:
    """The HTTP answer to a refusal of the service: 403, 409, or a 422 naming the field in
    the same shape as every other validation error."""
    if isinstance(exc, Forbidden):
        return HTTPException(403, str(exc))
    if isinstance(exc, CoupConflict | LiveError):
        return HTTPException(409, str(exc))
    where = exc.field if isinstance(exc, EntryError) else field or "body"
    return RequestValidationError([{"loc": ("body", where), "msg": str(exc),
                                    "type": "value_error"}])


def authenticate(ctx: Context, request: Request, authorization: str | None) -> Actor:
    """The actor of a write: a table key, a personal token, or a session with its CSRF
    token; else 401."""
    scheme, _, secret = (authorization or "").partition(" ")
    secret = secret.strip()
    if scheme.lower() == "bearer" and secret:
        if secret.startswith("rt_"):
            session = ctx.auth.token_session(secret)
            if session is not None:
                return Actor.user(session.user, session.role)
        else:
            found = ctx.auth.key_table(secret)
            if found is not None:
                return Actor.key(found[1], found[0])
        raise HTTPException(401, "unknown or revoked key or token",
                            headers={"WWW-Authenticate": "Bearer"})
    session = ctx.auth.session(request.cookies.get(SESSION_COOKIE))
    if session is not None:
        if not same_token(request.headers.get("x-csrf-token", ""), session.csrf):
            raise HTTPException(403, "missing or wrong CSRF token")
        return Actor.user(session.user, session.role)
    raise HTTPException(401, "missing bearer key, token or session",
                        headers={"WWW-Authenticate": "Bearer"})


def board_json(ctx: Context, table_id: str) -> dict[str, Any]:
    state = ctx.service.table_state(table_id)
    board = Board.from_coups(state.coups).to_dict() if state.status == "open" else None
    return {"table_id": table_id, "state": state.status, "shoe_id": state.shoe_id,
            "seq": state.seq, "board": board}


def stats_json(ctx: Context, table_id: str) -> dict[str, Any]:
    """The current shoe's statistics, randomness tests, integrity findings and live odds."""
    import polars as pl

    from roads.stats.report import report, shoe_odds  # scipy: loaded on the first ask

    state, coups, shoe = ctx.service.open_shoe_frames(table_id)
    result: dict[str, Any] = {"table_id": table_id, "state": state.status,
                              "shoe_id": state.shoe_id, "seq": state.seq}
    if coups is None or shoe is None:
        return {**result, "statistics": None, "randomness": None, "integrity": [],
                "live_odds": None}
    # The end-of-shoe rule can only be judged once the shoe is finished.
    shoe = shoe.with_columns(pl.lit(None, pl.Int16).alias("cut_card_index"))
    series = shoe_odds(coups, shoe) if coups.height else None
    return {**result, **report(coups, shoe), "live_odds": series[-1] if series else None}


def _state(state: TableState) -> dict[str, Any]:
    return state.summary()


def api_router(ctx: Context) -> APIRouter:
    router = APIRouter(prefix="/api", tags=["tables"])

    def actor(request: Request,
              authorization: Annotated[str | None, Header()] = None) -> Actor:
        return authenticate(ctx, request, authorization)

    def known(table_id: str) -> None:
        if not ctx.service.known(table_id, list(ctx.site.tables)):
            raise HTTPException(404, f"no table {table_id!r}")

    @router.get("/tables", summary="Every table: current shoe, coups so far, state")
    def tables() -> list[dict[str, Any]]:
        return [_state(ctx.service.table_state(t)) for t in ctx.table_ids()]

    @router.get("/tables/{table_id}/board", summary="The roads JSON contract of the current shoe")
    def board(table_id: str) -> dict[str, Any]:
        known(table_id)
        return board_json(ctx, table_id)

    @router.get("/tables/{table_id}/stats", summary="Statistics of the current shoe")
    def stats(table_id: str) -> dict[str, Any]:
        known(table_id)
        return stats_json(ctx, table_id)

    @router.post("/tables/{table_id}/coups", summary="Enter a coup (outcome or cards)",
                 responses={200: {"description": "Already stored (idempotent)"},
                            201: {"description": "Entered"}, 401: {}, 403: {}, 409: {},
                            422: {}})
    def coups(table_id: str, coup: CoupIn,  # type: ignore[valid-type]
              who: Annotated[Actor, Depends(actor)]) -> JSONResponse:
        entry, shoe_id, number = from_api(coup)
        try:
            event, created = ctx.service.enter_coup(who, table_id, entry, shoe_id, number)
        except InputError as exc:
            raise refused(exc) from None
        body = {"created": created, "table_id": table_id, "shoe_id": event.shoe_id,
                "coup": event.payload["coup"], "outcome": event.payload["outcome"],
                "seq": event.seq}
        return JSONResponse(body, status_code=201 if created else 200)

    @router.post("/tables/{table_id}/shoes", status_code=201, summary="Open a new shoe",
                 responses={401: {}, 403: {}, 409: {}, 422: {}})
    def shoes(table_id: str, shoe: ShoeIn, who: Annotated[Actor, Depends(actor)]
              ) -> dict[str, Any]:
        try:
            event = ctx.service.open_shoe(who, table_id, shoe.shoe_id, shoe.rules,
                                          shoe.burn_cards, shoe.cut_card_index)
        except InputError as exc:
            raise refused(exc, "rules") from None
        return {"table_id": table_id, "shoe_id": event.shoe_id, "seq": event.seq}

    @router.post("/tables/{table_id}/shoes/close", summary="Close the open shoe and seal it",
                 responses={401: {}, 403: {}, 409: {}})
    def close(table_id: str, who: Annotated[Actor, Depends(actor)]) -> dict[str, Any]:
        try:
            closed, sealed = ctx.service.close_shoe(who, table_id)
        except InputError as exc:
            raise refused(exc) from None
        return {"table_id": table_id, "shoe_id": closed.shoe_id, "seq": closed.seq,
                "sealed_seq": sealed.seq}

    @router.post("/tables/{table_id}/corrections", status_code=201,
                 summary="Ask for a void or an amendment (a supervisor decides)",
                 responses={401: {}, 403: {}, 409: {}, 422: {}})
    def correct(table_id: str, body: CorrectionIn, who: Annotated[Actor, Depends(actor)]
                ) -> dict[str, Any]:
        method = "keypad" if body.amended is None or body.amended.player_cards is None \
            else "cards"
        amended = body.amended.entry(method) if body.amended is not None else None
        try:
            event = ctx.service.request_correction(who, table_id, body.shoe_id, body.coup,
                                                   body.reason, amended)
        except InputError as exc:
            raise refused(exc) from None
        return {"request": event.seq, "table_id": table_id, "shoe_id": body.shoe_id,
                "coup": body.coup, "action": body.action}

    @router.post("/corrections/{request}", summary="Approve or reject a correction request",
                 responses={401: {}, 403: {}, 404: {}, 409: {}, 422: {}})
    def decide(request: Annotated[int, Path(ge=1, le=JOURNAL_SEQ_MAX)], body: DecisionIn,
               who: Annotated[Actor, Depends(actor)]
               ) -> dict[str, Any]:
        if ctx.service.request(request) is None:
            raise HTTPException(404, f"no correction request {request}")
        try:
            event = ctx.service.decide_correction(who, request, body.decision == "approve",
                                                  body.note)
        except InputError as exc:
            raise refused(exc) from None
        return {"request": request, "decision": body.decision, "event": event.kind,
                "seq": event.seq}

    return router


def health(ctx: Context) -> dict[str, Any]:
    seq, _ = ctx.service.journal.head()
    return {"status": "ok", "journal_seq": seq}


def install_errors(app: Any) -> None:
    """422s that name the field in plain words as well as FastAPI's ``detail`` list."""
    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        fields = [".".join(str(p) for p in e["loc"] if p != "body") or "body" for e in errors]
        message = "; ".join(f"{f}: {e['msg']}" for f, e in zip(fields, errors, strict=True))
        return JSONResponse({"detail": [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]}
                                        for e in errors], "error": message}, status_code=422)

    app.add_exception_handler(RequestValidationError, invalid)
