"""Attack: run a script through a configured or stored string, or frame a page.

Reproduced in issue 16: the casino name from ``site.toml`` was not escaped in the Dash
pages' ``<title>``, and those pages sent no Content-Security-Policy, so a script in it ran.
"""

from __future__ import annotations

import pytest

from tests.security.conftest import Site, SiteFactory

MARKUP = '<script>alert("owned")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def marked(make_site: SiteFactory) -> Site:
    return make_site(casino=MARKUP)


@pytest.mark.parametrize("path", ["/", "/tables/T1", "/history", "/login", "/table/T1"])
def test_markup_in_the_casino_name_is_escaped_on_every_page(marked: Site, path: str) -> None:
    page = marked.client.get(path)
    assert page.status_code == 200
    assert MARKUP not in page.text and "<script>alert" not in page.text
    assert "&lt;script&gt;alert(" in page.text


def test_markup_in_a_user_name_or_table_id_is_escaped(marked: Site) -> None:
    marked.login("dealer")
    page = marked.client.get('/operator/<b>x"')
    assert page.status_code == 200 and "<b>x" not in page.text
    assert "Table &lt;b&gt;x&#34;" in page.text  # Jinja2 escapes " as &#34;
    login = marked.client.get("/login", params={"error": MARKUP, "next": '"><script>x'})
    assert MARKUP not in login.text and '"><script>x' not in login.text


def _page_kinds(site: Site) -> dict[str, str]:
    """One path of every kind of response the server gives."""
    return {"Dash page": "/", "Dash table page": "/tables/T1", "Dash history": "/history",
            "Dash component": "/_dash-component-suites/dash/nope.js",
            "Dash layout": "/_dash-layout", "login": "/login", "table screen": "/table/T1",
            "operator": "/operator/T1", "audit": "/audit", "export form": "/audit/export",
            "static file": "/static/app.css", "asset": "/assets/dashboard.css",
            "API read": "/api/tables", "OpenAPI": "/openapi.json", "health": "/health",
            "not found": "/api/no-such-thing", "logo (none)": "/brand/logo"}


def test_every_kind_of_response_sends_the_security_headers(site: Site) -> None:
    site.login("auditor")
    pages = {kind: site.client.get(path) for kind, path in _page_kinds(site).items()}
    pages["refused body"] = site.client.post("/api/tables/T1/coups", content=b" " * 100_000)
    pages["refused login"] = site.client.post("/login", content=b"\xff")
    for kind, r in pages.items():
        csp = r.headers.get("content-security-policy", "")
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp, kind
        assert "object-src 'none'" in csp and "base-uri 'none'" in csp, kind
        assert r.headers["x-content-type-options"] == "nosniff", kind
        assert r.headers["referrer-policy"] == "same-origin", kind
        assert r.headers["x-frame-options"] == "DENY", kind
        assert "strict-transport-security" not in r.headers, kind  # not served over TLS
    # Scripts: this server's own files, and Dash's one inline renderer script by its hash.
    script_src = pages["Dash page"].headers["content-security-policy"].split("script-src ")[1]
    assert script_src.split(";")[0].startswith("'self' 'sha256-")
    assert "'unsafe-inline'" not in script_src.split(";")[0]
    assert "'unsafe-eval'" not in pages["Dash page"].headers["content-security-policy"]


def test_over_https_the_site_asks_browsers_to_stay_on_https(make_site: SiteFactory) -> None:
    site = make_site(https=True)
    for path in ("/", "/login", "/api/tables"):
        assert site.client.get(path).headers["strict-transport-security"] == \
            "max-age=31536000"
