"""What a client may send, and how slowly: the server's first line of defence.

:class:`RequestLimits` is an ASGI middleware in front of every route (FastAPI would read a
body before it resolves a route's dependencies, so the checks cannot live in the routes):

1. a ``Content-Length`` above the route's limit is refused (413) before a byte is read;
2. a write route refuses a request without a known credential (401) before its body is
   read: a syntactically valid, live bearer key or personal token, or a session cookie;
3. the body is then read up to the limit (413 when a chunked body grows past it) within a
   deadline (408 for a client that sends it too slowly), and handed to the route whole.

Early refusals close the connection, so nothing more of the body is parsed. Slow headers
are cut by :func:`header_deadline_protocol` (uvicorn has no header timeout of its own);
password hashing runs in the few threads of a :class:`LoginGate`, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from dashboard.config import Limits
from roads.auth import Auth

SESSION_COOKIE = "roads_session"
Credential = Literal["none", "bearer or session", "session"]
#: A check of a whole body before its route sees it: None, or what is wrong with it.
BodyCheck = Callable[[bytes], str | None]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Policy:
    """The limits of one kind of request."""

    max_bytes: int
    credential: Credential
    what: str  # in the 413 message: "at most N bytes for <what>"


def policies(limits: Limits) -> list[tuple[str, re.Pattern[str], Policy]]:
    """(methods, path pattern, policy), first match wins; anything else gets the last."""
    api = limits.api_body_bytes
    form = limits.form_body_bytes
    return [
        ("POST", re.compile(r"/login"), Policy(form, "none", "a login")),
        ("POST", re.compile(r"/logout|/audit/export"), Policy(form, "session", "a form")),
        ("POST", re.compile(r"/operator/[^/]+/action"),
         Policy(api, "session", "an operator action")),
        ("POST PUT PATCH DELETE", re.compile(r"/api/.*"),
         Policy(api, "bearer or session", "an API request")),
        ("POST", re.compile(r"/_dash-update-component"),
         Policy(limits.page_body_bytes, "none", "a dashboard update")),
        ("*", re.compile(r".*"), Policy(api, "none", "this request")),
    ]


def _refusal(status: int, detail: str, headers: Mapping[str, str] | None = None
             ) -> tuple[Message, Message]:
    body = json.dumps({"detail": detail}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items())]
    return ({"type": "http.response.start", "status": status, "headers": head},
            {"type": "http.response.body", "body": body})


class _Refused(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class RequestLimits:
    """Body limits by route, credentials before bodies, and a body-read deadline."""

    def __init__(self, app: ASGIApp, auth: Auth, limits: Limits,
                 checks: Mapping[str, BodyCheck] | None = None) -> None:
        self.app = app
        self.auth = auth
        self.limits = limits
        self.table = policies(limits)
        self.checks = dict(checks or {})

    def policy(self, method: str, path: str) -> Policy:
        for methods, pattern, policy in self.table:
            if (methods == "*" or method in methods.split()) and pattern.fullmatch(path):
                return policy
        raise AssertionError("the last policy matches every path")  # pragma: no cover

    def _known(self, headers: Headers, credential: Credential) -> bool:
        if credential == "bearer or session":
            scheme, _, secret = headers.get("authorization", "").partition(" ")
            if scheme.lower() == "bearer" and self.auth.bearer_known(secret.strip()):
                return True
        cookies = cookie_parser(headers.get("cookie", ""))
        return self.auth.session(cookies.get(SESSION_COOKIE)) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            body = await self._admit(scope, receive)
        except _Refused as refused:
            extra = {"WWW-Authenticate": "Bearer"} if refused.status == 401 else None
            for message in _refusal(refused.status, refused.detail, extra):
                await send(message)
            return
        if body is None:
            await self.app(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only http.disconnect

        await self.app(scope, replay, send)

    async def _admit(self, scope: Scope, receive: Receive) -> bytes | None:
        """The whole body (None when the request has none), or :class:`_Refused`."""
        headers = Headers(scope=scope)
        policy = self.policy(scope["method"], scope["path"])
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            raise _Refused(400, "Content-Length must be a whole number of bytes")
        if length is not None and int(length) > policy.max_bytes:
            raise _Refused(413, self._too_large(policy))
        if policy.credential != "none" and not self._known(headers, policy.credential):
            raise _Refused(401, "log in, or give a valid bearer key or token, first"
                           if policy.credential == "bearer or session" else "log in first")
        has_body = "transfer-encoding" in headers or (length is not None and int(length) > 0)
        body = await self._read(receive, policy) if has_body else b""
        check = self.checks.get(scope["path"])
        problem = check(body) if check is not None else None
        if problem is not None:
            raise _Refused(400, problem)
        return body if has_body else None

    async def _read(self, receive: Receive, policy: Policy) -> bytes:
        chunks: list[bytes] = []
        size = 0
        seconds = self.limits.body_seconds
        try:
            async with asyncio.timeout(seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _Refused(400, "the client went away before sending the body")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > policy.max_bytes:
                        raise _Refused(413, self._too_large(policy))
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            raise _Refused(408, f"the request body did not arrive within {seconds:g} s"
                           ) from None

    @staticmethod
    def _too_large(policy: Policy) -> str:
        return f"request body too large: at most {policy.max_bytes:,} bytes for {policy.what}"


class _HeadersTooLarge(Exception):
    """Raised inside the parser's callbacks to stop it at the header limit."""


class HeaderDeadline(HttpToolsProtocol):
    """uvicorn's httptools protocol with limits on each request's headers: they must arrive
    within ``header_seconds`` (a client trickling bytes, slowloris, is cut off instead of
    held forever) and within ``header_bytes`` (httptools itself sets no size limit)."""

    header_seconds: ClassVar[float] = 10.0
    header_bytes: ClassVar[int] = 16 * 1024
    _header_timer: asyncio.TimerHandle | None = None
    _header_size = 0
    _parsed_size = 0  # the request line's target and headers parsed so far
    _oversized = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is not None:
            self._header_size += len(data)
        super().data_received(data)
        # Counted until the headers are complete (a body in the same read is not refused).
        if self._header_timer is not None and self._header_size > self.header_bytes:
            self._refuse(b"431 Request Header Fields Too Large")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._parsed_size = 0
        self._arm()

    # Headers that arrive whole in one read are parsed before ``data_received`` can count
    # them (and a kept-alive connection's next request is never counted there): the parsed
    # target and headers are counted too, and parsing stops at the limit.
    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _count(self, size: int) -> None:
        self._parsed_size += size
        if self._parsed_size > self.header_bytes:
            self._oversized = True
            self._refuse(b"431 Request Header Fields Too Large")
            raise _HeadersTooLarge  # stops the parser; uvicorn's 400 is not sent (below)

    def send_400_response(self, msg: str) -> None:
        if not self._oversized:
            super().send_400_response(msg)

    def on_headers_complete(self) -> None:
        self._disarm()
        self._header_size = 0
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        """A request begun and not finished is answered 408; a connection that never sent
        a byte is closed silently, as an idle kept-alive one (a browser's spare socket)."""
        if self._header_size:
            self._refuse(b"408 Request Timeout")
        else:
            self._disarm()
            self.transport.close()

    def _refuse(self, status: bytes) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\n"
                                 b"connection: close\r\n\r\n")
            self.transport.close()


def header_deadline_protocol(limits: Limits) -> type[HeaderDeadline]:
    """The protocol class to give ``uvicorn.run(http=...)``."""
    return type("LimitedHttpToolsProtocol", (HeaderDeadline,),
                {"header_seconds": limits.header_seconds, "header_bytes": limits.header_bytes})


def server_options(limits: Limits) -> dict[str, Any]:
    """uvicorn's settings for this server (``roads serve`` and the tests use the same)."""
    return {
        "http": header_deadline_protocol(limits),
        "timeout_keep_alive": limits.keep_alive_seconds,
        # X-Forwarded-For is read by the app, and only from the configured trusted proxies.
        "proxy_headers": False,
        "ws_max_size": 64 * 1024, "ws_ping_interval": 20, "ws_ping_timeout": 20,
        # Screens hold their sockets open: shut down after 3 s instead of waiting for them.
        "timeout_graceful_shutdown": 3,
    }


class LoginBusy(Exception):
    """Too many logins are being checked at once (or from this address): try again."""


def _yield_to_the_tables() -> None:
    """Run this thread at a lower CPU priority (Linux: per thread): when logins and coups
    compete for a core, the event loop serving the tables wins."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


class LoginGate:
    """Password hashing off the event loop: ``workers`` threads at a lower CPU priority, at
    most ``queue`` more attempts waiting, and at most two at a time from one address.
    Whatever a login flood does, it takes at most ``workers`` cores, yields those to the
    tables' requests, and the attempts beyond the queue are answered "busy" at once."""

    PER_ADDRESS = 2

    def __init__(self, workers: int, queue: int) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="login",
                                        initializer=_yield_to_the_tables)
        self._capacity = workers + queue
        self._busy = 0
        self._by_address: dict[str, int] = {}

    async def run(self, address: str, check: Callable[[], T]) -> T:
        if self._by_address.get(address, 0) >= self.PER_ADDRESS:
            raise LoginBusy("a login from this address is already being checked")
        if self._busy >= self._capacity:
            raise LoginBusy("too many logins at once; try again in a moment")
        self._busy += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, check)
        finally:
            self._busy -= 1
            left = self._by_address.pop(address) - 1
            if left:
                self._by_address[address] = left

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def json_object(body: bytes, what: str) -> dict[str, Any]:
    """A request body that must be one JSON object; ValueError in words otherwise."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{what} is not UTF-8 text") from None
    except (ValueError, RecursionError):
        raise ValueError(f"{what} is not valid JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} must be a JSON object")
    return data


def form_fields(body: bytes, what: str, max_fields: int) -> dict[str, str]:
    """A URL-encoded form's fields (the first value of each); ValueError in words for a
    body that is not UTF-8 form data or has more than ``max_fields`` fields."""
    try:
        pairs = parse_qs(body.decode("utf-8"), max_num_fields=max_fields, errors="strict")
    except UnicodeDecodeError:
        raise ValueError(f"{what} is not UTF-8 text") from None
    except ValueError:
        raise ValueError(f"{what} has more than {max_fields} fields") from None
    return {k: v[0] for k, v in pairs.items()}


def same_token(given: str, expected: str) -> bool:
    """Whether a client's CSRF token is ``expected``, in constant time. The client's text is
    compared as UTF-8 bytes: ``secrets.compare_digest`` refuses ``str`` with non-ASCII
    characters by raising, which turned a form or header holding one into a 500."""
    return secrets.compare_digest(given.encode("utf-8", "surrogatepass"),
                                  expected.encode("utf-8", "surrogatepass"))
