"""`roads serve --demo`: the dealers wait for a worker's answer, not for a socket."""

from __future__ import annotations

import socket
import threading

from dashboard.workers import listen, wait_until_served


def _answer(sock: socket.socket, status: str, requests: int) -> threading.Thread:
    """Answer ``requests`` requests on ``sock`` with ``status``, as a worker would."""

    def run() -> None:
        for _ in range(requests):
            try:
                conn, _ = sock.accept()
            except OSError:  # the test closed the socket
                return
            with conn:
                conn.recv(4096)
                conn.sendall(f"HTTP/1.1 {status}\r\nContent-Length: 2\r\n"
                             "Connection: close\r\n\r\nok".encode())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_listening_socket_that_no_worker_serves_is_not_served() -> None:
    with listen("127.0.0.1", 0) as sock:  # the kernel completes the connections itself
        assert wait_until_served(sock, seconds=0.4) is False


def test_a_worker_answering_health_is_served() -> None:
    with listen("127.0.0.1", 0) as sock:
        answering = _answer(sock, "200 OK", 1)
        assert wait_until_served(sock, seconds=10) is True
        answering.join(5)


def test_an_error_from_health_is_not_served() -> None:
    with listen("127.0.0.1", 0) as sock:
        _answer(sock, "503 Service Unavailable", 100)
        assert wait_until_served(sock, seconds=0.5) is False
