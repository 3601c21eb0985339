"""Attack: exhaust the server's memory or connections with request bodies and slow clients.

Reproduced in issue 16: four 200 MB POSTs without a key took the server from 0.46 to 2.5 GB,
because the body was parsed before the key was checked and nothing limited its size.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import pytest

from tests.security.conftest import Site, Socket, read_response

COUP = json.dumps({"outcome": "B"}).encode()


def _chunks(total: int, size: int = 4096) -> Iterator[bytes]:
    for _ in range(total // size):
        yield b" " * size


@pytest.mark.parametrize("with_key", [False, True])
def test_an_oversized_body_is_refused_by_its_length_before_it_is_read(
        site: Site, with_key: bool) -> None:
    headers = {"content-type": "application/json"}
    if with_key:
        headers["authorization"] = f"Bearer {site.key}"
    r = site.client.post("/api/tables/T1/coups", content=b" " * 200_000, headers=headers)
    assert r.status_code == 413
    assert r.json()["detail"] == "request body too large: at most 8,192 bytes for an " \
        "API request"
    assert r.headers["connection"] == "close"
    assert [e.kind for e in site.ctx.service.journal.events("T1")] == ["api_key_issued"]


def test_a_chunked_body_growing_past_the_limit_is_refused(site: Site) -> None:
    r = site.client.post("/api/tables/T1/coups", content=_chunks(64 * 4096),
                         headers={"authorization": f"Bearer {site.key}",
                                  "content-type": "application/json"})
    assert r.status_code == 413 and "at most 8,192 bytes" in r.json()["detail"]
    login = site.client.post("/login", content=_chunks(16 * 4096))
    assert login.status_code == 413 and "for a login" in login.json()["detail"]


def test_credentials_are_checked_before_the_body_is_parsed(site: Site) -> None:
    # Not JSON at all: had it been parsed first, the answer would be 422.
    for headers in ({}, {"authorization": "Bearer rk_00000000_" + "A" * 43},
                    {"authorization": "Bearer not-a-key"}, {"cookie": "roads_session=forged"}):
        r = site.client.post("/api/tables/T1/coups", content=b"{{{", headers=headers)
        assert r.status_code == 401, headers
        assert r.headers["www-authenticate"] == "Bearer"
    for path in ("/operator/T1/action", "/audit/export", "/logout"):
        assert site.client.post(path, content=b"{{{").json() == {"detail": "log in first"}
    # With a live key the same body reaches the route, which names what is wrong.
    r = site.client.post("/api/tables/T1/coups", content=b"{{{",
                         headers={"authorization": f"Bearer {site.key}",
                                  "content-type": "application/json"})
    assert r.status_code == 422


def test_a_legitimate_coup_still_goes_through(site: Site) -> None:
    auth = {"authorization": f"Bearer {site.key}"}
    assert site.client.post("/api/tables/T1/shoes", json={"shoe_id": "S1"},
                            headers=auth).status_code == 201
    r = site.client.post("/api/tables/T1/coups", content=COUP,
                         headers={**auth, "content-type": "application/json"})
    assert r.status_code == 201 and r.json()["coup"] == 1


def test_a_chunked_oversize_on_a_real_socket_closes_the_connection(live: Socket) -> None:
    with live.connect() as conn:
        conn.sendall(b"POST /api/tables/T1/coups HTTP/1.1\r\nHost: t\r\n"
                     b"Authorization: Bearer " + live.key.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(4):
            conn.sendall(b"1000\r\n" + b" " * 4096 + b"\r\n")
        answer = read_response(conn)  # returns only once the server has closed it
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"at most 8,192 bytes" in answer


def test_a_client_sending_its_body_too_slowly_is_cut_off(live: Socket) -> None:
    with live.connect() as conn:
        conn.sendall(b"POST /login HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nuser=")
        answer = read_response(conn)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"did not arrive within 1 s" in answer


def test_a_client_trickling_its_headers_is_cut_off(live: Socket) -> None:
    with live.connect() as conn:
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n")
        for _ in range(3):  # a byte now and then (slowloris) does not keep it open
            time.sleep(0.4)
            conn.sendall(b"X")
        answer = read_response(conn)
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_an_idle_connection_is_closed_and_huge_headers_are_refused(live: Socket) -> None:
    with live.connect() as conn:  # sent nothing at all: closed without a word
        assert read_response(conn) == b""
    with live.connect() as conn:
        # The server may close while we are still sending.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nX-Pad: " + b"a" * 2_000_000)
        assert read_response(conn).startswith(b"HTTP/1.1 431 ")
    with live.connect() as conn:  # and an ordinary request is served as before
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert read_response(conn).startswith(b"HTTP/1.1 200 ")
