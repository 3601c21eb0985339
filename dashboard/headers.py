"""Security headers on every response, pages of Dash included.

One middleware sets them, so no page can forget them: a Content-Security-Policy that runs
only this server's scripts (plus Dash's one inline renderer script, allowed by its hash),
``nosniff``, a same-origin referrer, no framing, and HSTS when the site is served over TLS.
Inline styles stay allowed: Dash components and plotly set ``style`` attributes.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def content_security_policy(script_hashes: Iterable[str] = ()) -> str:
    """The one policy of every response (``script_hashes`` as Dash's ``csp_hashes()``)."""
    scripts = " ".join(["'self'", *script_hashes])
    return "; ".join([
        "default-src 'self'", f"script-src {scripts}", "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:", "font-src 'self' data:", "connect-src 'self'",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'",
        "frame-ancestors 'none'"])


class SecurityHeaders:
    """Adds (and overrides) the security headers of every HTTP response."""

    def __init__(self, app: ASGIApp, policy: str, https: bool = False) -> None:
        self.app = app
        self.headers = {
            "Content-Security-Policy": policy,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
            "X-Frame-Options": "DENY",
            "Cross-Origin-Opener-Policy": "same-origin",
            "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
        }
        if https:
            self.headers["Strict-Transport-Security"] = "max-age=31536000"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, with_headers)
