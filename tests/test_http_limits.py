"""The web server's bounds on trailers, time and connections (launcher.http), against Brain's web
server run as ./brainctl run runs it (launcher.processes.web_command), with small limits set
through the environment so the tests are quick."""

from __future__ import annotations

import os
import resource
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx
import psutil
import pytest
from django.core.exceptions import ImproperlyConfigured

from launcher.http import LOOPBACK_RESERVE, MAX_HEAD_BYTES, Limits, address_key, refusal
from launcher.processes import PROCESS_ENV, web_command
from tests.conftest import free_port
from tests.progress import log_size, wait_while_progressing

pytestmark = pytest.mark.live_server
ROOT = Path(__file__).resolve().parent.parent
ENDLESS = 64 * 1024 * 1024  # far more than the kernel's buffers on both sides can hold
CAP = 120.0  # seconds a socket may stay silent before a test gives up on it: generous, never reached when it works
SLOW_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 300  # a minute at a byte every 0.2 s
HELD = 1000  # idle connections a crowded server holds: its whole total


@dataclass
class Server:
    port: int
    pid: int

    def connect(self, source: str = "127.0.0.1") -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=CAP, source_address=(source, 0))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def rss(self) -> int:
        return int(psutil.Process(self.pid).memory_info().rss)


def start(tmp_path: Path, **limits: int) -> tuple[subprocess.Popen[bytes], Server, Path]:
    """Brain's web server in a process of its own, with ``limits`` (BRAIN_HTTP_<NAME> variables)."""
    port, log = free_port(), tmp_path / "web.log"
    env = dict(os.environ, **PROCESS_ENV, BRAIN_DATA_DIR=str(tmp_path), SECRET_KEY="http-limits-test")
    env.update({f"BRAIN_HTTP_{name.upper()}": str(value) for name, value in limits.items()})
    with log.open("w") as out:
        command = web_command(host="127.0.0.1", port=port, access_log=False)
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    return proc, Server(port=port, pid=proc.pid), log


def answers(proc: subprocess.Popen[bytes], server: Server, log: Path) -> bool:
    assert proc.poll() is None, log.read_text()
    try:
        return httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def make_room_for_sockets(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (needed if hard == resource.RLIM_INFINITY else min(needed, hard), hard)
        )


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """Two servers, started side by side: "quick" has deadlines of a second and no connection limits
    to speak of; "crowded" has long deadlines (held connections stay open), HELD connections in
    all and ten per address."""
    make_room_for_sockets(2 * HELD + 512)  # this process's sockets; each server makes room for its own
    quick = start(tmp_path_factory.mktemp("quick"), head_seconds=1, keep_alive_seconds=1)
    crowded = start(
        tmp_path_factory.mktemp("crowded"),
        head_seconds=600,
        keep_alive_seconds=600,
        max_connections=HELD,
        max_connections_per_address=10,
    )
    try:
        for proc, server, log in (quick, crowded):
            wait_while_progressing(
                partial(answers, proc, server, log),
                log_size(log),
                what="the web server to answer",
                details=log.read_text,
            )
        yield {"quick": quick[1], "crowded": crowded[1]}
    finally:
        for proc, _, _ in (quick, crowded):
            proc.kill()
            proc.wait(30)


@pytest.fixture
def quick(servers: dict[str, Server]) -> Server:
    return servers["quick"]


@pytest.fixture
def crowded(servers: dict[str, Server]) -> Server:
    return servers["crowded"]


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection (a reset ends it too)."""
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except ConnectionResetError:
        pass
    return answer


def readable(socks: list[socket.socket], timeout: float) -> list[socket.socket]:
    """Those of ``socks`` with something to read (or closed), waiting up to ``timeout`` seconds;
    poll, since select cannot watch descriptors past 1023."""
    poller = select.poll()
    for sock in socks:
        poller.register(sock, select.POLLIN)
    ready = {fd for fd, _ in poller.poll(timeout * 1000)}
    return [sock for sock in socks if sock.fileno() in ready]


def trickle_until_answered(sock: socket.socket, pieces: bytes) -> bytes:
    """Send ``pieces`` a byte every 0.2 s, as a slow client does, until the server answers or closes."""
    for byte in pieces:
        if readable([sock], 0.2):
            return read_all(sock)
        try:
            sock.sendall(bytes([byte]))
        except OSError:  # closed by the server: what it said is still to be read
            return read_all(sock)
    raise AssertionError(f"the server took {len(pieces)} bytes of a head, one every 0.2 s")


def get(path: str = "/healthz") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def one_response(sock: socket.socket) -> bytes:
    """The head of one whole response (a chunked body or one with Content-Length), read off a
    connection that stays open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    fields = dict(line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:])
    length = int(fields.get(b"content-length", -1))
    while len(body) < length if length >= 0 else not body.endswith(b"0\r\n\r\n"):
        body += sock.recv(65536)
    return head


# Trailers


def test_endless_trailers_are_cut_short_and_the_server_does_not_grow(quick):
    before = quick.rss()
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n"
    trailers = b"".join(b"X-Trailer-%d: %s\r\n" % (n, b"t" * 1000) for n in range(64))
    sent = 0
    with quick.connect() as sock:
        sock.sendall(head)
        try:
            while sent < ENDLESS:
                sock.sendall(trailers)
                sent += len(trailers)
        except OSError:  # the server closed the connection: broken pipe or reset
            pass
        answer = read_all(sock)
    assert sent < ENDLESS, "the server took every trailer"
    if answer:
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
        assert b"too large" in answer
    assert quick.rss() - before < 16 * 1024 * 1024
    assert httpx.get(f"{quick.url}/healthz", timeout=30).status_code == 200


def test_a_chunked_request_with_a_few_trailers_is_served(quick):
    with quick.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        sock.sendall(
            b"3\r\nabc\r\n0\r\nX-Checksum: 900150983cd24fb0\r\nX-Other: " + b"o" * (MAX_HEAD_BYTES // 2) + b"\r\n\r\n"
        )
        assert one_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(get())  # and the connection goes on
        assert one_response(sock).startswith(b"HTTP/1.1 200")


# Deadlines


def test_a_connection_that_sends_nothing_is_closed_after_the_head_deadline(quick):
    with quick.connect() as sock:
        opened = time.monotonic()
        assert sock.recv(1024) == b""  # closed, without a word: it asked nothing
        assert time.monotonic() - opened >= 0.9


def test_a_head_sent_a_byte_at_a_time_is_cut_with_408(quick):
    with quick.connect() as sock:
        answer = trickle_until_answered(sock, SLOW_HEAD)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive within 1 seconds" in answer


def test_a_slow_head_on_a_kept_alive_connection_is_cut_too(quick):
    """uvicorn's keep-alive timer stops at the next request's first byte; the head deadline then runs."""
    with quick.connect() as sock:
        sock.sendall(get())
        assert one_response(sock).startswith(b"HTTP/1.1 200")
        answer = trickle_until_answered(sock, SLOW_HEAD)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


def test_an_idle_kept_alive_connection_is_closed(quick):
    with quick.connect() as sock:
        sock.sendall(get())
        assert one_response(sock).startswith(b"HTTP/1.1 200")
        assert sock.recv(1024) == b""


# Connections


def held(server: Server, sources: list[str], stack: ExitStack) -> list[socket.socket]:
    return [stack.enter_context(server.connect(source)) for source in sources]


def refused_with_503(sock: socket.socket) -> bytes:
    sock.sendall(get())
    answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
    assert b"\r\nretry-after: 600\r\n" in answer.lower()
    return answer


def test_past_the_limit_per_address_a_connection_gets_503_and_other_addresses_are_served(crowded):
    with ExitStack() as stack:
        held(crowded, ["127.0.0.2"] * 10, stack)
        with crowded.connect("127.0.0.2") as extra:
            assert b"Your address has 10 connections open" in refused_with_503(extra)
        with crowded.connect("127.0.0.3") as other:
            other.sendall(get())
            assert one_response(other).startswith(b"HTTP/1.1 200")


def test_a_fresh_client_is_served_while_the_server_holds_its_whole_total_idle(crowded):
    sources = [f"127.0.1.{n // 10 + 1}" for n in range(HELD)]  # ten from each of a hundred addresses
    with ExitStack() as stack:
        idle = held(crowded, sources, stack)
        # Loopback's reserve lets the health check in: a fresh client on loopback is served.
        assert httpx.get(f"{crowded.url}/healthz", timeout=CAP).status_code == 200
        held(crowded, [f"127.0.2.{n + 1}" for n in range(LOOPBACK_RESERVE)], stack)
        with crowded.connect("127.0.3.1") as extra:
            assert b"connections open, the most it takes" in refused_with_503(extra)
        assert readable(idle, 0) == []  # the idle ones were neither answered nor closed


def test_refused_connections_do_not_count_and_closed_ones_free_their_place(crowded):
    with ExitStack() as stack:
        first = held(crowded, ["127.0.0.4"] * 10, stack)
        for _ in range(20):
            with crowded.connect("127.0.0.4") as extra:
                refused_with_503(extra)
        first[0].close()

        def admitted() -> bool:
            with crowded.connect("127.0.0.4") as sock:
                sock.sendall(get())
                return one_response(sock).startswith(b"HTTP/1.1 200")

        wait_while_progressing(admitted, lambda: None, what="a closed connection to free its place")


# The rules, without a server


LIMITS = Limits(head_seconds=20, keep_alive_seconds=5, max_connections=100, max_per_address=10)


def test_a_full_server_refuses_outside_addresses_and_keeps_a_reserve_for_loopback():
    assert refusal(LIMITS, host="203.0.113.7", open_total=99, open_here=0) is None
    assert "the most it takes" in (refusal(LIMITS, host="203.0.113.7", open_total=100, open_here=0) or "")
    assert refusal(LIMITS, host="127.0.0.1", open_total=100, open_here=0) is None
    assert refusal(LIMITS, host="::1", open_total=100 + LOOPBACK_RESERVE - 1, open_here=0) is None
    assert refusal(LIMITS, host="::1", open_total=100 + LOOPBACK_RESERVE, open_here=0) is not None


def test_the_limit_per_address_counts_and_zero_turns_it_off():
    assert "Your address has 10" in (refusal(LIMITS, host="203.0.113.7", open_total=50, open_here=10) or "")
    assert refusal(LIMITS, host="127.0.0.1", open_total=50, open_here=10) is not None  # loopback counts too
    off = Limits(head_seconds=20, keep_alive_seconds=5, max_connections=100, max_per_address=0)
    assert refusal(off, host="203.0.113.7", open_total=50, open_here=99) is None


def test_an_ipv6_client_is_counted_by_its_64_and_a_mapped_ipv4_one_by_its_address():
    assert address_key("2001:db8:1:2::5") == address_key("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::5") != address_key("2001:db8:1:2::5")
    assert address_key("::ffff:198.51.100.4") == address_key("198.51.100.4") == "198.51.100.4"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BRAIN_HTTP_HEAD_SECONDS", "0"),
        ("BRAIN_HTTP_MAX_CONNECTIONS", "lots"),
        ("BRAIN_HTTP_MAX_CONNECTIONS_PER_ADDRESS", "-1"),
    ],
)
def test_a_bad_limit_stops_the_server_naming_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ImproperlyConfigured, match=name):
        Limits.from_env()
