"""Attack: turn the login limiter against staff, spoof the client address, flood logins.

Reproduced in issue 16: failures were counted per user name *or* address, so anyone could
lock out a known user; ``X-Forwarded-For`` was believed from the loopback address; scrypt
ran on the event loop; every refused attempt was a journal event of its own.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from dashboard.limits import LoginBusy, LoginGate
from tests.security.conftest import PASSWORD, SiteFactory


def test_a_third_party_cannot_lock_a_dealer_out(make_site: SiteFactory) -> None:
    attacker = make_site(client=("10.0.0.66", 4000))
    for _ in range(12):
        attacker.login_form("dealer", "guessing the password")
    assert attacker.login_form("dealer").status_code == 429  # the guesser is held back...
    dealer = attacker.client.__class__(attacker.client.app, client=("10.0.0.7", 4000))
    page = dealer.get("/login")
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = dealer.post("/login", follow_redirects=False,
                    content=f"user=dealer&password={PASSWORD}&csrf={token}&next=/",
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 303 and r.headers["location"] == "/"  # ...the dealer is not
    assert attacker.ctx.auth.session(dealer.cookies.get("roads_session")) is not None


def test_a_held_back_attempt_says_when_to_retry(make_site: SiteFactory) -> None:
    site = make_site()
    for _ in range(site.ctx.auth.guard.limits.free_failures):
        assert site.login_form("dealer", "wrong password").status_code == 303
    r = site.login_form("dealer")
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert "too many failed logins; try again in 1 s" in r.text


def test_x_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy(
        make_site: SiteFactory) -> None:
    spoofer = make_site(client=("10.0.0.66", 4000))
    # The spoofer claims to be the dealer's terminal, to lock it out or to escape its own
    # per-address budget: the address recorded is the spoofer's own.
    spoofer.login_form("dealer", "wrong password")
    spoofer.client.headers["X-Forwarded-For"] = "10.0.0.7"
    spoofer.login_form("super", "wrong password")
    spoofer.ctx.auth.flush_refusals(force=True)
    sources = [s for e in spoofer.ctx.service.journal.events() if e.kind == "login_refused"
               for s in e.payload["sources"]]
    assert {s["address"] for s in sources} == {"10.0.0.66"}

    proxied = make_site(client=("10.0.0.5", 4000), trusted_proxies=["10.0.0.0/29"])
    proxied.client.headers["X-Forwarded-For"] = "192.0.2.44"
    proxied.login_form("dealer", "wrong password")
    proxied.ctx.auth.flush_refusals(force=True)
    [event] = [e for e in proxied.ctx.service.journal.events() if e.kind == "login_refused"]
    assert event.payload["sources"][0]["address"] == "192.0.2.44"


def test_a_login_flood_is_journaled_in_aggregate_not_dropped(make_site: SiteFactory) -> None:
    site = make_site()
    flood = 40
    for i in range(flood):
        site.login_form(f"user{i % 7}", "spraying passwords")
    site.login("dealer")  # a success is still its own event
    site.client.__exit__(None, None, None)  # shutdown journals the window still open
    events = site.ctx.service.journal.events()
    refused = [e for e in events if e.kind == "login_refused"]
    assert 1 <= len(refused) <= 2  # one per minute-window (two if the minute turned)
    assert sum(e.payload["attempts"] for e in refused) == flood
    assert sum(s["attempts"] for e in refused for s in e.payload["sources"]) == flood
    assert not [e for e in events if e.kind == "login_failed"]
    assert [e.payload["user"] for e in events if e.kind == "login"] == ["dealer"]


def test_a_typed_user_name_is_recorded_bounded(make_site: SiteFactory) -> None:
    site = make_site()
    site.login_form("x" * 1000, "wrong password")
    site.ctx.auth.flush_refusals(force=True)
    [event] = [e for e in site.ctx.service.journal.events() if e.kind == "login_refused"]
    assert event.payload["sources"][0]["user"] == "x" * 64 + "…"


def test_password_hashing_is_bounded_per_server_and_per_address() -> None:
    async def scenario() -> list[str]:
        gate = LoginGate(workers=1, queue=1)
        release = threading.Event()

        def hold() -> str:  # stands in for scrypt, occupying the one worker
            release.wait(10)
            return "checked"

        first = asyncio.create_task(gate.run("10.0.0.1", hold))
        second = asyncio.create_task(gate.run("10.0.0.1", hold))
        await asyncio.sleep(0.05)
        outcomes = []
        for address in ("10.0.0.1", "10.0.0.2"):  # the address at its limit; the server full
            try:
                await gate.run(address, hold)
            except LoginBusy as busy:
                outcomes.append(str(busy))
        release.set()
        outcomes += [await first, await second]
        outcomes.append(await gate.run("10.0.0.2", lambda: "after the flood"))
        gate.close()
        return outcomes

    # In a thread of its own: the e2e suite's session browser keeps a loop running here.
    with ThreadPoolExecutor(1) as thread:
        outcomes = thread.submit(asyncio.run, scenario()).result()
    assert outcomes == [
        "a login from this address is already being checked",
        "too many logins at once; try again in a moment",
        "checked", "checked", "after the flood"]


@pytest.mark.parametrize("body", [b"\xff\xfe\xfd", b"user=%FF%FE&password=x",
                                  b"&".join([b"a=1"] * 20)])
def test_a_malformed_login_form_is_a_400_naming_the_problem(make_site: SiteFactory,
                                                            body: bytes) -> None:
    site = make_site()
    r = site.client.post("/login", content=body,
                         headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400
    assert r.json()["detail"] in ("the login form is not UTF-8 text",
                                  "the login form has more than 8 fields")
