"""Attack: keep using credentials that should be dead, or steal a cookie over plain HTTP.

Reproduced in issue 16: no way to revoke an API key or disable a user (the columns
existed), and no ``Secure`` cookie option for deployments behind TLS.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from roads.cli import main
from tests.security.conftest import PASSWORD, Site, SiteFactory

COUP = {"outcome": "B"}


def _post_coup(site: Site, secret: str) -> int:
    r = site.client.post("/api/tables/T1/coups", json=COUP,
                         headers={"authorization": f"Bearer {secret}"})
    return int(r.status_code)


def test_a_disabled_user_is_out_at_once(site: Site) -> None:
    csrf = site.login("dealer")
    assert site.client.get("/operator/T1").status_code == 200
    site.ctx.auth.disable_user("dealer", by="admin")
    # The same browser, the same cookie: the next request is refused.
    r = site.client.post("/operator/T1/action", json={"action": "open_shoe"},
                         headers={"X-CSRF-Token": csrf})
    assert r.status_code == 401
    assert site.client.get("/operator/T1", follow_redirects=False).status_code == 303
    assert site.login_form("dealer").status_code == 303  # refused like a wrong password
    assert site.ctx.auth.session(site.client.cookies.get("roads_session")) is None


def test_a_revoked_key_stops_writing(site: Site) -> None:
    site.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"},
                     headers={"authorization": f"Bearer {site.key}"})
    assert _post_coup(site, site.key) == 201
    site.ctx.auth.revoke(site.key.split("_")[1], by="admin")
    assert _post_coup(site, site.key) == 401
    assert [e.kind for e in site.ctx.service.journal.events("T1")].count("coup_entered") == 1


def test_a_revoked_personal_token_is_refused_before_its_body(site: Site) -> None:
    token = site.ctx.auth.issue_token("super")
    body = b"{{{"
    gate = "log in, or give a valid bearer key or token, first"
    known = site.client.post("/api/tables/T1/coups", content=body,
                             headers={"authorization": f"Bearer {token}"})
    assert known.json()["detail"] != gate  # a live token passes the gate to the route
    site.ctx.auth.revoke(token.split("_")[1])
    r = site.client.post("/api/tables/T1/coups", content=body,
                         headers={"authorization": f"Bearer {token}"})
    assert r.status_code == 401 and r.json()["detail"] == gate


def test_cookies_are_secure_when_the_site_is_served_over_https(make_site: SiteFactory) -> None:
    plain, tls = make_site(), make_site(https=True)
    for site, secure in ((plain, False), (tls, True)):
        form = site.client.get("/login")
        assert ("secure" in form.headers["set-cookie"].lower()) is secure
        r = site.login_form("dealer")
        cookies = r.headers.get_list("set-cookie")
        session = [c for c in cookies if c.startswith("roads_session=")]
        assert len(session) == 1
        attributes = [a.strip().lower() for a in session[0].split(";")]
        assert "httponly" in attributes and "samesite=strict" in attributes
        assert ("secure" in attributes) is secure


def test_the_cli_disables_revokes_and_issues_tokens(tmp_path: Path) -> None:
    store = str(tmp_path / "store")

    def roads(*args: str, stdin: str = "") -> Result:
        return CliRunner().invoke(main, [*args, "--store", store], input=stdin)

    assert roads("users", "add", "ana", "--role", "supervisor", "--password-stdin",
                 stdin=PASSWORD + "\n").exit_code == 0
    token = roads("users", "token", "ana").stdout.strip()
    key = roads("users", "key", "--table", "T1").stdout.strip()
    assert token.startswith("rt_") and key.startswith("rk_")
    listed = roads("users", "keys").stdout
    assert token.split("_")[1] in listed and key.split("_")[1] in listed
    assert roads("users", "revoke-key", key.split("_")[1]).stdout.strip() == \
        f"API key {key.split('_')[1]} revoked"
    again = roads("users", "revoke-key", key.split("_")[1])
    assert again.exit_code == 2 and again.stderr.count("\n") == 1
    assert "already revoked" in again.stderr
    assert roads("users", "disable", "ana").stdout.strip() == "user ana disabled"
    assert [line.split()[-1] for line in roads("users", "keys").stdout.splitlines()] == \
        ["revoked", "revoked"]  # the key by hand, the token with its user
    missing = roads("users", "disable", "nobody")
    assert missing.exit_code == 2 and "no user 'nobody'" in missing.stderr
    assert roads("users", "enable", "ana").exit_code == 0
    for command in ("token", "revoke-key", "disable", "enable", "keys"):
        assert roads("users", command, "--help").exit_code == 0
