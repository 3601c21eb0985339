"""Headers over the limit that arrive whole in one read, or on a kept-alive connection's
next request, are refused (431) like headers trickled in (the attack session of 2 Dec 2026
found both served: the limit was counted only while headers were still incomplete)."""

from __future__ import annotations

import contextlib

from tests.security.conftest import Socket, read_response


def _answer(live: Socket, request: bytes) -> bytes:
    with live.connect() as conn:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(request)
        return read_response(conn)


def test_headers_over_the_limit_sent_in_one_piece_are_refused(live: Socket) -> None:
    whole = b"GET /health HTTP/1.1\r\nHost: t\r\nX-Pad: " + b"a" * 64_000 + b"\r\n\r\n"
    assert _answer(live, whole).startswith(b"HTTP/1.1 431 ")
    many = b"GET /health HTTP/1.1\r\nHost: t\r\n" + b"".join(
        b"X-%d: a\r\n" % i for i in range(5_000)) + b"\r\n"
    assert _answer(live, many).startswith(b"HTTP/1.1 431 ")
    target = b"GET /health?" + b"q" * 20_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n"
    assert _answer(live, target).startswith(b"HTTP/1.1 431 ")


def test_the_next_request_on_a_kept_alive_connection_is_limited_too(live: Socket) -> None:
    with live.connect() as conn:
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        first = b""
        while not first.endswith(b"}"):  # the health answer, whole; the connection stays
            first += conn.recv(4096)
        assert first.startswith(b"HTTP/1.1 200 ")
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Pad: " + b"a" * 40_000
                         + b"\r\n\r\n")
        assert read_response(conn).startswith(b"HTTP/1.1 431 ")
    ordinary = b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    assert _answer(live, ordinary).startswith(b"HTTP/1.1 200 ")  # the limit is per request
