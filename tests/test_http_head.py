"""The web server's bound on a request's head (launcher.http), against the tests' live server,
which runs the protocol ./brainctl run and the container run (launcher.processes.HTTP_PARSER)."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import httpx

from launcher.http import MAX_HEAD_BYTES

ENDLESS = 64 * 1024 * 1024  # far more than the kernel's buffers on both sides can hold


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def test_a_header_that_never_ends_is_cut_short_and_answered_400(brain_url):
    with socket.create_connection(_address(brain_url), timeout=60) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Endless: ")
        sent = 0
        try:
            while sent < ENDLESS:
                sock.sendall(b"a" * 65536)
                sent += 65536
        except OSError:  # the server closed the connection: broken pipe or reset
            pass
        answer = b""
        try:
            while chunk := sock.recv(4096):
                answer += chunk
        except OSError:
            pass  # a reset may arrive before the answer is read; the cut is what counts
    assert sent < ENDLESS, "the server took the whole header"
    if answer:
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b"too large" in answer
    assert httpx.get(f"{brain_url}/healthz", timeout=30).status_code == 200  # and it still serves


def test_heads_within_the_bound_are_served_one_after_another_on_one_connection(brain_url):
    header = {"X-Long": "b" * (MAX_HEAD_BYTES * 3 // 4)}  # each within the bound, together past it
    with httpx.Client(timeout=30) as client:
        for _ in range(3):
            assert client.get(f"{brain_url}/healthz", headers=header).status_code == 200


def test_requests_with_large_bodies_are_not_taken_for_large_heads(brain_url):
    """A whole request (head, body and end) often arrives in one read: its body is not its head."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"d" * (MAX_HEAD_BYTES * 4) + b'"}'
    with httpx.Client(timeout=30) as client:
        for _ in range(3):
            response = client.post(f"{brain_url}/mcp", content=body, headers={"Content-Type": "application/json"})
            assert response.status_code != 400 or b"too large" not in response.content, response.text[:200]
            assert response.status_code in (401, 406), response.text[:200]  # no token: refused by Brain, not the parser
