"""A CSRF token that is not ASCII (in the login form, its cookie, the API's or a page's
``X-CSRF-Token`` header, the export form) is a wrong token, refused in words: before,
``secrets.compare_digest`` raised on it, and the login form answered anyone with a 500. A
non-UTF-8 export form is a 400."""

from __future__ import annotations

import pytest

from tests.security.conftest import FORM, PASSWORD, Site


@pytest.mark.parametrize(("cookie", "field"), [(b"abc", "%C3%A9"), (b"\xe9", "abc")])
def test_a_non_ascii_login_csrf_is_an_expired_form(site: Site, cookie: bytes,
                                                   field: str) -> None:
    response = site.client.post("/login", follow_redirects=False,
                                headers={**FORM, "cookie": b"roads_login_csrf=" + cookie},
                                content=f"user=super&password={PASSWORD}&csrf={field}")
    assert response.status_code == 303
    assert "form%20expired" in response.headers["location"]
    assert "roads_session" not in response.headers.get("set-cookie", "")


def test_a_non_ascii_csrf_header_is_a_wrong_token(site: Site) -> None:
    csrf = site.login("super")
    for header in (b"\xe9", csrf.encode() + b"\xe9"):
        response = site.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"},
                                    headers={"x-csrf-token": header})
        assert response.status_code == 403
        assert response.json()["detail"] == "missing or wrong CSRF token"
    assert site.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"},
                            headers={"x-csrf-token": csrf}).status_code == 201


def test_a_non_ascii_or_non_utf8_export_form_is_refused_in_words(site: Site) -> None:
    site.login("auditor")
    response = site.client.post("/audit/export", headers=FORM, content="csrf=%C3%A9&table=T1")
    assert response.status_code == 403
    response = site.client.post("/audit/export", headers=FORM, content=b"csrf=\xff&table=T1")
    assert response.status_code == 400 and "not UTF-8" in response.text
