"""The HTTP API for card-reading shoes and other systems (OpenAPI schema at ``/openapi.json``).

Reads are open (they show what the table screens show). Writes need
``Authorization: Bearer <key>`` with a key issued for that table (``roads users key``):
none or an unknown key is 401, a key of another table 403. A payload that does not fit is
422 naming the field; a state the table does not allow (no open shoe, a coup out of order)
is 409; posting a coup that is already stored is idempotent (200, ``created: false``).
"""

from datetime import datetime
from typing import Annotated, Any, Literal

import polars as pl
from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dashboard.context import Context
from roads.board import Board
from roads.cards import parse_cards
from roads.errors import InputError
from roads.stats.report import report, shoe_odds
from roads.store.live import CoupConflict, CoupEntry, close_shoe, open_shoe, post_coup
from roads.store.tables import TableState, live_frames, table_state

Cards = Annotated[list[str], Field(min_length=2, max_length=3)]


class CoupIn(BaseModel):
    """One coup: an outcome (keypad systems) or both hands' cards (card-reading shoes)."""

    model_config = ConfigDict(extra="forbid")
    shoe_id: str | None = Field(None, min_length=1, max_length=64,
                                description="With `coup`, makes the post idempotent.")
    coup: int | None = Field(None, ge=1, le=200, description="The coup number in the shoe.")
    outcome: Literal["B", "P", "T"] | None = None
    player_cards: Cards | None = None
    banker_cards: Cards | None = None
    player_pair: bool | None = None
    banker_pair: bool | None = None
    natural: bool | None = None
    player_total: int | None = Field(None, ge=0, le=9)
    banker_total: int | None = Field(None, ge=0, le=9)
    dealt_at: datetime | None = None

    @field_validator("player_cards", "banker_cards")
    @classmethod
    def _cards(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else parse_cards(value)

    @model_validator(mode="after")
    def _complete(self) -> "CoupIn":
        if (self.player_cards is None) != (self.banker_cards is None):
            raise ValueError("give both player_cards and banker_cards, or neither")
        if self.outcome is None and self.player_cards is None:
            raise ValueError("give the outcome or the cards")
        if (self.shoe_id is None) != (self.coup is None):
            raise ValueError("give both shoe_id and coup, or neither")
        return self

    def entry(self) -> CoupEntry:
        return CoupEntry(
            self.outcome,
            tuple(self.player_cards) if self.player_cards else None,
            tuple(self.banker_cards) if self.banker_cards else None,
            self.player_pair, self.banker_pair, self.natural, self.player_total,
            self.banker_total, self.dealt_at.isoformat() if self.dealt_at else None)


class ShoeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    shoe_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
    rules: str = "standard-8"
    burn_cards: list[str] | None = Field(None, max_length=11)
    cut_card_index: int | None = Field(None, ge=0, le=416)

    @field_validator("burn_cards")
    @classmethod
    def _cards(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else parse_cards(value)


def _known(ctx: Context, table_id: str) -> None:
    if table_id not in ctx.site.tables and ctx.journal.table_head(table_id) == 0:
        raise HTTPException(404, f"no table {table_id!r}")


def board_json(ctx: Context, table_id: str) -> dict[str, Any]:
    state = table_state(ctx.store, table_id)
    board = Board.from_coups(state.coups).to_dict() if state.status == "open" else None
    return {"table_id": table_id, "state": state.status, "shoe_id": state.shoe_id,
            "seq": state.seq, "board": board}


def stats_json(ctx: Context, state: TableState) -> dict[str, Any]:
    """The current shoe's statistics, randomness tests, integrity findings and live odds."""
    table_id = state.table_id
    result: dict[str, Any] = {"table_id": table_id, "state": state.status,
                              "shoe_id": state.shoe_id, "seq": state.seq}
    if state.status != "open" or state.shoe_id is None:
        return {**result, "statistics": None, "randomness": None, "integrity": [],
                "live_odds": None}
    coups, shoe = live_frames(ctx.store, table_id, state.shoe_id)
    # The end-of-shoe rule can only be judged once the shoe is finished.
    shoe = shoe.with_columns(pl.lit(None, pl.Int16).alias("cut_card_index"))
    series = shoe_odds(coups, shoe) if coups.height else None
    return {**result, **report(coups, shoe), "live_odds": series[-1] if series else None}


def api_router(ctx: Context) -> APIRouter:
    router = APIRouter(prefix="/api", tags=["tables"])

    def writer(table_id: str, authorization: Annotated[str | None, Header()] = None) -> str:
        """The key id of a valid key for this table, else 401/403."""
        scheme, _, key = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not key:
            raise HTTPException(401, "missing bearer key",
                                headers={"WWW-Authenticate": "Bearer"})
        found = ctx.auth.key_table(key.strip())
        if found is None:
            raise HTTPException(401, "unknown or revoked key",
                                headers={"WWW-Authenticate": "Bearer"})
        if found[0] != table_id:
            raise HTTPException(403, f"this key is for table {found[0]}, not {table_id}")
        return f"key:{found[1]}"

    @router.get("/tables", summary="Every table: current shoe, coups so far, state")
    def tables() -> list[dict[str, Any]]:
        return [table_state(ctx.store, t).summary() for t in ctx.table_ids()]

    @router.get("/tables/{table_id}/board", summary="The roads JSON contract of the current shoe")
    def board(table_id: str) -> dict[str, Any]:
        _known(ctx, table_id)
        return board_json(ctx, table_id)

    @router.get("/tables/{table_id}/stats", summary="Statistics of the current shoe")
    def stats(table_id: str) -> dict[str, Any]:
        _known(ctx, table_id)
        return stats_json(ctx, table_state(ctx.store, table_id))

    @router.post("/tables/{table_id}/coups", summary="Enter a coup (outcome or cards)",
                 responses={200: {"description": "Already stored (idempotent)"},
                            201: {"description": "Entered"}, 401: {}, 403: {}, 409: {},
                            422: {}})
    def coups(table_id: str, coup: CoupIn, actor: Annotated[str, Depends(writer)]
              ) -> JSONResponse:
        try:
            event, created = post_coup(ctx.journal, table_id, coup.entry(), actor,
                                       coup.shoe_id, coup.coup)
        except CoupConflict as exc:
            raise HTTPException(409, str(exc)) from None
        except InputError as exc:
            raise HTTPException(409, str(exc)) from None
        body = {"created": created, "table_id": table_id, "shoe_id": event.shoe_id,
                "coup": event.payload["coup"], "outcome": event.payload["outcome"],
                "seq": event.seq}
        return JSONResponse(body, status_code=201 if created else 200)

    @router.post("/tables/{table_id}/shoes", status_code=201, summary="Open a new shoe")
    def shoes(table_id: str, shoe: ShoeIn, actor: Annotated[str, Depends(writer)]
              ) -> dict[str, Any]:
        try:
            event = ctx.journal.run(open_shoe(table_id, shoe.shoe_id, shoe.rules, actor,
                                              shoe.burn_cards, shoe.cut_card_index))
        except InputError as exc:
            raise HTTPException(409, str(exc)) from None
        return {"table_id": table_id, "shoe_id": event.shoe_id, "seq": event.seq}

    @router.post("/tables/{table_id}/shoes/close", summary="Close the open shoe and seal it")
    def close(table_id: str, actor: Annotated[str, Depends(writer)]) -> dict[str, Any]:
        try:
            event = ctx.journal.run(close_shoe(table_id, actor))
        except InputError as exc:
            raise HTTPException(409, str(exc)) from None
        ctx.store.seal(table_id, event.shoe_id or "")
        return {"table_id": table_id, "shoe_id": event.shoe_id, "seq": event.seq}

    return router


def health(ctx: Context) -> dict[str, Any]:
    seq, _ = ctx.journal.head()
    return {"status": "ok", "journal_seq": seq}


def install_errors(app: Any) -> None:
    """422s that name the field in plain words as well as FastAPI's ``detail`` list."""
    from fastapi.exceptions import RequestValidationError

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        fields = [".".join(str(p) for p in e["loc"] if p != "body") or "body" for e in errors]
        message = "; ".join(f"{f}: {e['msg']}" for f, e in zip(fields, errors, strict=True))
        return JSONResponse({"detail": [{"loc": e["loc"], "msg": e["msg"], "type": e["type"]}
                                        for e in errors], "error": message}, status_code=422)

    app.add_exception_handler(RequestValidationError, invalid)
