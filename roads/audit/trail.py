"""The audit trail and retention: who did what when, in words, and what may be deleted.

Every journaled action is listed with its actor and time (`roads audit`, the `/audit`
page). The page says each event as a sentence ("coup 3 amended: Player → Tie; requested by
ana, approved by bo, reason: …"): a correction event holds only the new values, so what it
changed is read from the record (the coup as entered, through the store's read port, with
the amendments journaled before it). Retention is a jurisdiction profile with a minimum
period; `roads purge --before D` refuses to delete anything younger than that, and journals
what it deletes before deleting it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from roads.errors import InputError
from roads.store import SYSTEM, Selection, Store
from roads.store.journal import Event
from roads.store.journal import EventFilter as EventFilter  # the trail's filter

#: Minimum retention in years by jurisdiction profile (as publicly summarised; check the
#: regulation before relying on a figure).
RETENTION_YEARS: dict[str, int] = {
    "nevada": 5,
    "new-jersey": 5,
    "maryland": 5,
    "nebraska": 7,
    "macau": 5,
    "default": 7,
}

#: Every journal event kind as the audit page names it (its action filter and column).
ACTIONS: dict[str, str] = {
    "shoe_opened": "shoe opened", "coup_entered": "coup entered",
    "correction_requested": "correction requested", "coup_amended": "coup amended",
    "coup_voided": "coup voided", "correction_rejected": "correction rejected",
    "shoe_closed": "shoe closed", "shoe_sealed": "shoe sealed", "table_closed": "table closed",
    "import_committed": "file imported", "files_published": "simulated shoes stored",
    "store_compacted": "store compacted", "data_purged": "data purged",
    "data_exported": "data exported", "login": "logged in", "logout": "logged out",
    "login_failed": "login failed", "login_refused": "logins refused",
    "user_added": "user added", "user_changed": "user changed",
    "user_disabled": "user disabled", "user_enabled": "user enabled",
    "api_key_issued": "API key issued", "api_key_revoked": "API key revoked",
    "token_issued": "personal token issued", "token_revoked": "personal token revoked",
}
#: Kinds an auditor asks for together (the action filter offers them beside each kind).
ACTION_GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "corrections": ("corrections (requests, amendments, voids, rejections)", (
        "correction_requested", "coup_amended", "coup_voided", "correction_rejected")),
    "logins": ("logins and users", (
        "login", "logout", "login_failed", "login_refused", "user_added", "user_changed",
        "user_disabled", "user_enabled", "token_issued", "token_revoked")),
    "files": ("stored files (seals, imports, engine runs, compactions, purges)", (
        "shoe_sealed", "import_committed", "files_published", "store_compacted",
        "data_purged")),
}
#: The table of the events that concern no table (logins, users, whole-store exports).
NO_TABLE = SYSTEM
OUTCOMES = {"B": "Banker", "P": "Player", "T": "Tie"}
FLAGS = (("player_pair", "Player pair"), ("banker_pair", "Banker pair"), ("natural", "natural"))
#: More voids and amendments than any shoe holds (each is a supervisor's decision).
MAX_CORRECTIONS = 100_000
#: The events that speak of a coup's content before they changed it.
CORRECTION_KINDS = ("correction_requested", "coup_amended", "coup_voided",
                    "correction_rejected")


def _flags(coup: Mapping[str, Any]) -> str:
    return ", ".join(label for key, label in FLAGS if coup.get(key))


def flag_words(coup: Mapping[str, Any]) -> str:
    """The coup's pairs and natural as people say them: "Banker pair, natural" ("" if none)."""
    words = _flags(coup)
    return words[:1].upper() + words[1:]


def coup_words(coup: Mapping[str, Any], cards: bool = False) -> str:
    """A coup in words: the winner with its total first ("Banker 7–6", "Tie 4–4", or just
    "Player" when only the outcome was entered), then the pairs and natural; with ``cards``
    the hands as dealt ("Player 9h Kd, Banker 2c 3c")."""
    outcome = str(coup.get("outcome") or "")
    text = OUTCOMES.get(outcome, outcome or "no outcome")
    player, banker = coup.get("player_total"), coup.get("banker_total")
    if player is not None and banker is not None:
        text += f" {player}–{banker}" if outcome == "P" else f" {banker}–{player}"
    flags = _flags(coup)
    if flags:
        text += f", {flags}"
    if cards and coup.get("player_cards") and coup.get("banker_cards"):
        text += (f" (Player {' '.join(coup['player_cards'])}, "
                 f"Banker {' '.join(coup['banker_cards'])})")
    return text


def _with_cards(*coups: Mapping[str, Any] | None) -> bool:
    return any(c is not None and bool(c.get("player_cards")) for c in coups)


def change_words(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> str:
    """What an amendment changes: "Player → Tie" (the cards shown when either side has
    cards; "(no longer stored) → Tie" when the record no longer holds the coup as it was)."""
    cards = _with_cards(before, after)
    was = coup_words(before, cards) if before is not None else "(no longer stored)"
    return f"{was} → {coup_words(after, cards)}"


@dataclass(frozen=True, slots=True)
class Before:
    """What the correction events of one page need to say what they changed: the coups as
    entered, the voids and amendments journaled for them, and the requests decided."""

    originals: dict[tuple[str, str, int], dict[str, Any]]
    fixes: list[Event]
    requests: dict[int, Event]

    def coup(self, table_id: str, shoe_id: str, coup: int,
             seq: int) -> dict[str, Any] | None:
        """The coup as the record held it just before event ``seq`` (None if unknown)."""
        current = self.originals.get((table_id, shoe_id, coup))
        for e in self.fixes:
            if e.seq >= seq or current is None:
                break
            if (e.table_id, e.shoe_id, int(e.payload["coup"])) != (table_id, shoe_id, coup):
                continue
            current = None if e.kind == "coup_voided" else {**current, **e.payload["new"]}
        return current

    @classmethod
    def of(cls, store: Store, events: Iterable[Event]) -> Before:
        """Read what ``events`` need, each of their shoes once: its coups as entered through
        the read port (a shoe at a time, which the port finds by an indexed query) and its
        voids and amendments from the journal (an indexed query too)."""
        events = [e for e in events if e.kind in CORRECTION_KINDS and e.shoe_id is not None]
        requests = {}
        for e in events:
            if e.kind == "correction_rejected":
                request = store.journal.at(int(e.payload["request"]))
                if request is not None:
                    requests[request.seq] = request
        originals: dict[tuple[str, str, int], dict[str, Any]] = {}
        fixes: list[Event] = []
        for table_id, shoe_id in sorted({(e.table_id, e.shoe_id or "") for e in events}):
            which = Selection(table_id, shoe_id)
            for r in store.read.coups(which, originals=True).iter_rows(named=True):
                originals[(table_id, shoe_id, r["coup"])] = {**r, "outcome": str(r["outcome"])}
            fixes += store.journal.event_page(  # the shoe's voids and amendments
                EventFilter(table_id, shoe_id, kinds=("coup_voided", "coup_amended")),
                0, MAX_CORRECTIONS)[0]
        return cls(originals, sorted(fixes, key=lambda e: e.seq), requests)


def _reason(text: object) -> str:
    return f"reason: {text}" if text else "no reason given"


def _correction_words(e: Event, before: Before) -> str:
    p, table, shoe = e.payload, e.table_id, e.shoe_id or ""
    coup = int(p["coup"])
    was = before.coup(table, shoe, coup, e.seq)
    if e.kind == "correction_requested":
        if p.get("action") == "void":
            it = f" (it was {coup_words(was, _with_cards(was))})" if was else ""
            return (f"void of coup {coup} requested by {e.actor}{it}; "
                    f"{_reason(p.get('reason'))}")
        return (f"amendment of coup {coup} requested by {e.actor}: "
                f"{change_words(was, p['new'])}; {_reason(p.get('reason'))}")
    if e.kind == "correction_rejected":
        request = before.requests.get(int(p["request"]))
        asked = ""
        if request is not None:
            asked = ("void" if request.payload.get("action") == "void" else
                     change_words(before.coup(table, shoe, coup, request.seq),
                                  request.payload["new"]))
            asked = f" ({asked}, asked by {request.actor})"
        note = f"; note: {p['reason']}" if p.get("reason") else ""
        return (f"request #{p['request']} to correct coup {coup}{asked} rejected by "
                f"{e.actor}{note}")
    who = f"requested by {e.actor}, approved by {p.get('approver')}, {_reason(p.get('reason'))}"
    if e.kind == "coup_voided":
        it = f" (it was {coup_words(was, _with_cards(was))})" if was else ""
        return f"coup {coup} voided{it}; {who}"
    return f"coup {coup} amended: {change_words(was, p['new'])}; {who}"


def plural(n: int, thing: str) -> str:
    """"1 coup", "2 coups", "1,000 coups" (never "1 coups")."""
    return f"{n:,} {thing}" + ("" if n == 1 else "s")


def _files(p: Mapping[str, Any]) -> str:
    return plural(len(p.get("files") or ()), "file")


def _export_words(p: Mapping[str, Any]) -> str:
    what = p.get("parameters") or {}
    slice_ = ", ".join(f"{label} {what[key]}" for key, label in (
        ("table_id", "table"), ("shoe_id", "shoe"), ("day", "day"), ("start", "from"),
        ("end", "to")) if what.get(key)) or "everything"
    signed = ", signed" if p.get("signed") else ""
    return (f"compliance bundle exported ({slice_}): {plural(int(p.get('coups') or 0), 'coup')},"
            f" data digest {str(p.get('data_digest', ''))[:12]}…{signed}")


def _user_words(e: Event) -> str:
    p = e.payload
    change = p.get("change")
    if change == "password":
        return f"password of {p.get('user')} changed"
    if change == "disabled":
        return (f"user {p.get('user')} disabled: "
                f"{plural(int(p.get('sessions_ended') or 0), 'session')} ended, "
                f"{plural(int(p.get('tokens_revoked') or 0), 'token')} revoked")
    if change == "enabled":
        return f"user {p.get('user')} enabled"
    return f"user {p.get('user')} changed: {change}"


def _refused_words(p: Mapping[str, Any]) -> str:
    sources = "; ".join(f"{s.get('user') or '?'} from {s.get('address') or '?'}: "
                        f"{s.get('attempts')}" for s in p.get("sources") or ())
    more = f" and {p['more_sources']} more" if p.get("more_sources") else ""
    minutes = int(p.get("window_seconds") or 0) // 60
    return (f"{plural(int(p.get('attempts') or 0), 'login attempt')} refused in the "
            f"{minutes} minutes from {str(p.get('window_start', ''))[:16].replace('T', ' ')}"
            + (f" ({sources}{more})" if sources else ""))


def _import_words(p: Mapping[str, Any]) -> str:
    t = p.get("totals") or {}
    names = ", ".join(str(f.get("file", "")).rsplit("/", 1)[-1] for f in p.get("inputs") or ())
    return (f"import {p.get('run')} committed from {names or 'no file'}: "
            f"{plural(int(t.get('accepted') or 0), 'coup')} accepted, "
            f"{int(t.get('quarantined') or 0):,} quarantined, "
            f"{int(t.get('flagged') or 0):,} flagged; {_files(p)}")


def _simulated_words(p: Mapping[str, Any]) -> str:
    run = p.get("run") or {}
    return (f"{plural(int(run.get('shoes') or 0), 'simulated shoe')} "
            f"({plural(int(p.get('coups') or 0), 'coup')}, rules {run.get('rules')}, "
            f"seed {run.get('seed')}) stored in {_files(p)}")


_WORDS: dict[str, Callable[[Event], str]] = {
    "shoe_opened": lambda e: (
        f"shoe {e.shoe_id} opened at table {e.table_id}, rules {e.payload.get('rules')}"
        + (f", {plural(len(e.payload['burn_cards']), 'card')} burned"
           if e.payload.get("burn_cards") else "")),
    "coup_entered": lambda e: (f"coup {e.payload.get('coup')} entered"
                               + (f" by {e.payload['entry']}" if e.payload.get("entry")
                                  else "") + f": {coup_words(e.payload, cards=True)}"),
    "shoe_closed": lambda e: f"shoe {e.shoe_id} closed",
    "shoe_sealed": lambda e: (f"shoe {e.shoe_id} sealed into the store: "
                              f"{plural(int(e.payload.get('coups') or 0), 'coup')}, "
                              f"{_files(e.payload)}"),
    "table_closed": lambda e: f"table {e.table_id} closed for the day",
    "import_committed": lambda e: _import_words(e.payload),
    "files_published": lambda e: _simulated_words(e.payload),
    "store_compacted": lambda e: (f"{e.payload.get('table')} of {e.payload.get('day')} "
                                  f"compacted into {_files(e.payload)}"),
    "data_purged": lambda e: (f"stored days before {e.payload.get('before')} deleted under "
                              f"the {e.payload.get('profile')} retention profile: "
                              f"{', '.join(e.payload.get('partitions') or ()) or 'nothing'}"),
    "data_exported": lambda e: _export_words(e.payload),
    "login": lambda e: (f"{e.payload.get('user')} logged in"
                        + (f" from {e.payload['address']}" if e.payload.get("address")
                           else "")),
    "login_failed": lambda e: (f"failed login as {e.payload.get('user')}"
                               + (f" from {e.payload['address']}"
                                  if e.payload.get("address") else "")),
    "logout": lambda e: f"{e.payload.get('user')} logged out",
    "login_refused": lambda e: _refused_words(e.payload),
    "user_added": lambda e: f"user {e.payload.get('user')} added as {e.payload.get('role')}",
    "user_changed": _user_words,
    "user_disabled": _user_words,
    "user_enabled": _user_words,
    "api_key_issued": lambda e: f"API key {e.payload.get('key_id')} issued for table "
                                f"{e.table_id}",
    "api_key_revoked": lambda e: f"API key {e.payload.get('key_id')} of table {e.table_id} "
                                 "revoked",
    "token_issued": lambda e: (f"personal token {e.payload.get('token_id')} issued to "
                               f"{e.payload.get('user')}, valid until "
                               f"{str(e.payload.get('expires_at', ''))[:10]}"),
    "token_revoked": lambda e: (f"personal token {e.payload.get('token_id')} of "
                                f"{e.payload.get('user')} revoked"),
}


def event_words(event: Event, before: Before) -> str:
    """One journaled action as a sentence (``before``: what the page's corrections need)."""
    if event.kind in CORRECTION_KINDS:
        return _correction_words(event, before)
    words = _WORDS.get(event.kind)
    return words(event) if words else ACTIONS.get(event.kind, event.kind)


@dataclass(frozen=True, slots=True)
class TrailPage:
    """One page of the audit trail, newest first, and how many events match."""

    rows: list[dict[str, Any]]
    total: int


def trail_page(store: Store, which: EventFilter, offset: int = 0,
               limit: int = 50) -> TrailPage:
    """A page of the matching events in words: one indexed query for the page and its
    total, and one read of the record for the corrections on it (never the whole journal)."""
    events, total = store.journal.event_page(which, offset, limit)
    before = Before.of(store, events)
    return TrailPage([{
        "seq": e.seq, "at": e.at[:19].replace("T", " "), "kind": e.kind,
        "action": ACTIONS.get(e.kind, e.kind),
        "table_id": None if e.table_id == SYSTEM else e.table_id, "shoe_id": e.shoe_id,
        "actor": e.actor, "words": event_words(e, before)} for e in events], total)


def audit_trail(store: Store, table_id: str | None = None, start: date | None = None,
                end: date | None = None) -> list[dict[str, Any]]:
    """Every journaled action in order: sequence, time, kind, table, shoe, who, details."""
    rows = []
    for e in store.journal.events(table_id):
        day = datetime.fromisoformat(e.at).date()
        if (start and day < start) or (end and day > end):
            continue
        details = {k: v for k, v in e.payload.items()
                   if k in ("coup", "reason", "approver", "rules", "files", "before",
                            "partitions", "profile", "user", "role", "address", "request",
                            "action", "key_id", "change", "parameters", "data_digest")}
        rows.append({"seq": e.seq, "at": e.at, "kind": e.kind, "table_id": e.table_id,
                     "shoe_id": e.shoe_id, "actor": e.actor, "details": details})
    return rows


def retention_cutoff(profile: str, today: date | None = None) -> date:
    """The oldest day that must still be kept under ``profile``."""
    if profile not in RETENTION_YEARS:
        raise InputError(f"unknown retention profile {profile!r}; known: "
                         f"{', '.join(RETENTION_YEARS)}")
    today = today or datetime.now(UTC).date()
    years = RETENTION_YEARS[profile]
    try:
        return today.replace(year=today.year - years)
    except ValueError:  # 29 February in a year that has none
        return today.replace(year=today.year - years, day=28)


def purge(store: Store, before: date, actor: str, profile: str = "default",
          today: date | None = None) -> list[str]:
    """Delete the day partitions older than ``before``; refuse inside the retention period.

    Both the partition's date and the journal's own time count: a partition is kept while
    it is younger than the period, and also while it holds anything the journal received
    inside the period (a backdated coup cannot make fresh data look old). The deletion is
    journaled (who, which files, under which profile) before any file goes.
    """
    cutoff = retention_cutoff(profile, today)
    if before > cutoff:
        raise InputError(f"refused: {before.isoformat()} is inside the {profile} retention "
                         f"period ({RETENTION_YEARS[profile]} years: data from "
                         f"{cutoff.isoformat()} on must be kept)")
    keep_since = datetime.combine(cutoff, datetime.min.time(), UTC)
    return store.purge(before, keep_since, actor, profile)
