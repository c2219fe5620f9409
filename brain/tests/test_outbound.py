"""The outbound address rule (brain.infra.outbound) on its own, with BRAIN_OUTBOUND_ALLOW unset: which
addresses it refuses, what the operator's list lets through, that a destination is resolved once
and connected to at the address that was checked, and that the setting refuses what it cannot read.
The resolver is the module's own, replaced here, so no name is looked up on the network and no
connection leaves this machine."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from django.core.exceptions import ImproperlyConfigured

from brain.infra import outbound
from brain.infra.env import env_hosts_and_networks

PUBLIC = "93.184.216.34"


@pytest.fixture(autouse=True)
def nothing_allowed(settings):
    settings.BRAIN_OUTBOUND_ALLOW = []
    settings.BRAIN_OUTBOUND_TIMEOUT_SECONDS = 5


@pytest.fixture
def resolver(monkeypatch):
    """Names answered from a table, each lookup counted; an address stands for itself."""
    table: dict[str, list[list[str]]] = {}
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        if host not in table:
            return [str(ipaddress.ip_address(host))]
        answers = table[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]

    monkeypatch.setattr(outbound, "resolve", resolve)
    return table, asked


@pytest.fixture
def connects(monkeypatch):
    """Every address a socket was opened to; each is refused on the spot."""
    tried: list[tuple[str, int]] = []

    def refuse(address: tuple[str, int], timeout: float) -> socket.socket:
        tried.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(outbound, "open_socket", refuse)
    return tried


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.9.9.9",
        "::1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "fe80::1",
        "fd00::1",
        "0.0.0.0",  # noqa: S104 (a destination, not a bind)
        "::",
        "224.0.0.1",
        "ff02::1",
        "240.0.0.1",
        "100.64.0.1",
        "192.0.2.10",
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
    ],
)
def test_it_refuses_addresses_that_are_not_global(address):
    with pytest.raises(outbound.Refused, match="not a global address"):
        outbound.check(address, 993)


def test_it_lets_a_global_address_through_as_it_was_resolved(resolver):
    table, _ = resolver
    table["imap.example.com"] = [[PUBLIC, "2606:2800:220:1:248:1893:25c8:1946"]]
    destination = outbound.check("imap.example.com", 993)
    assert destination == outbound.Destination(
        host="imap.example.com", port=993, addresses=(PUBLIC, "2606:2800:220:1:248:1893:25c8:1946")
    )


def test_it_refuses_a_name_when_any_of_its_addresses_is_internal(resolver):
    table, _ = resolver
    table["split.example.com"] = [[PUBLIC, "127.0.0.1"]]
    with pytest.raises(outbound.Refused, match="127.0.0.1"):
        outbound.check("split.example.com", 443)


def test_it_refuses_a_name_that_does_not_resolve(monkeypatch):
    def unknown(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(outbound, "resolve", unknown)
    with pytest.raises(outbound.Refused, match="does not resolve"):
        outbound.check("nowhere.invalid", 993)


def test_the_operator_allows_networks_and_names(settings, resolver):
    table, _ = resolver
    table["imap.corp.example"] = [["10.1.2.3"]]
    table["mail.other.example"] = [["10.9.9.9"]]
    settings.BRAIN_OUTBOUND_ALLOW = ["10.1.0.0/16", "[fd00::]/8"]
    assert outbound.check("10.1.2.3", 993).addresses == ("10.1.2.3",)
    assert outbound.check("[fd12::1]", 993).host == "fd12::1"  # brackets off, for TLS and the Host header
    with pytest.raises(outbound.Refused):
        outbound.check("10.2.0.1", 993)
    settings.BRAIN_OUTBOUND_ALLOW = [".corp.example"]  # a domain and every name under it
    assert outbound.check("IMAP.corp.example.", 993).addresses == ("10.1.2.3",)
    with pytest.raises(outbound.Refused):
        outbound.check("mail.other.example", 993)
    with pytest.raises(outbound.Refused):
        outbound.check("10.1.2.3", 993)  # the name was allowed, not its address


def test_it_connects_to_the_address_it_checked_and_never_asks_again(resolver, connects):
    table, asked = resolver
    table["rebind.example.com"] = [[PUBLIC], ["127.0.0.1"]]  # public for the check, loopback after
    destination = outbound.check("rebind.example.com", 993)
    with pytest.raises(ConnectionRefusedError):
        outbound.connect(destination)
    assert connects == [(PUBLIC, 993)]
    assert asked == ["rebind.example.com"]


def test_it_tries_each_checked_address_in_turn(resolver, connects):
    table, _ = resolver
    table["two.example.com"] = [[PUBLIC, "93.184.216.35"]]
    with pytest.raises(ConnectionRefusedError):
        outbound.connect(outbound.check("two.example.com", 443))
    assert connects == [(PUBLIC, 443), ("93.184.216.35", 443)]


def test_a_socket_it_opens_keeps_the_outbound_timeout(settings):
    settings.BRAIN_OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.BRAIN_OUTBOUND_TIMEOUT_SECONDS = 3
    with socket.create_server(("127.0.0.1", 0)) as listener:
        sock = outbound.connect(outbound.check("127.0.0.1", listener.getsockname()[1]))
        with sock:
            assert sock.gettimeout() == 3


def test_every_failure_reads_the_same_and_the_reason_goes_to_the_log(caplog):
    said = {
        outbound.unreachable("The mail server", host=host, port=993, error=error)
        .replace(f"{host}:993", "HOST:993")
        .replace(f"[{host}]:993", "HOST:993")
        for host, error in [
            ("10.0.0.1", outbound.Refused("10.0.0.1 is not a global address")),
            ("imap.example.com", ConnectionRefusedError(111, "Connection refused")),
            ("imap.example.com", TimeoutError("timed out")),
            ("::1", OSError("certificate verify failed: CN=internal-db.corp")),
        ]
    }
    assert len(said) == 1
    assert "internal-db" not in said.pop()
    assert "CN=internal-db.corp" in caplog.text


def test_the_setting_refuses_what_it_cannot_read(monkeypatch):
    monkeypatch.setenv("X_ALLOW", "10.0.0.0/8, ::1, [fd00::]/8, imap.corp.example, .corp.example, localhost")
    assert len(env_hosts_and_networks("X_ALLOW")) == 6
    for bad in ("10.0.0.0/33", "imap corp", "http://imap.example.com", "300.1.1.1"):
        monkeypatch.setenv("X_ALLOW", bad)
        with pytest.raises(ImproperlyConfigured, match="X_ALLOW lists host names, addresses and networks"):
            env_hosts_and_networks("X_ALLOW")


# --- fetch: one bounded request -----------------------------------------------------------------


@pytest.fixture
def server(settings):
    """A loopback HTTP server whose answer each test chooses; loopback allowed by the operator."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    settings.BRAIN_OUTBOUND_ALLOW = ["127.0.0.0/8"]
    state: dict[str, object] = {"status": 200, "headers": {}, "chunks": [b"{}"], "pause": 0.0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            self.send_response(int(state["status"]))  # type: ignore[call-overload]
            for name, value in dict(state["headers"]).items():  # type: ignore[call-overload]
                self.send_header(name, value)
            self.end_headers()
            try:
                for piece in state["chunks"]:  # type: ignore[attr-defined]
                    self.wfile.write(piece)
                    self.wfile.flush()
                    time.sleep(float(state["pause"]))  # type: ignore[arg-type]
            except OSError:
                pass  # the client gave up, as it should

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_port}/x"
    yield state
    httpd.shutdown()
    httpd.server_close()


def test_fetch_returns_a_redirect_without_following_it(server):
    server["status"], server["headers"] = 302, {"Location": "http://169.254.169.254/latest/meta-data/"}
    answer = outbound.fetch("GET", str(server["url"]))
    assert (answer.status, answer.headers["location"]) == (302, "http://169.254.169.254/latest/meta-data/")


def test_fetch_stops_an_answer_past_its_size(server):
    server["chunks"] = [b"x" * 4096] * 10
    with pytest.raises(OSError, match="longer than 8192 bytes"):
        outbound.fetch("GET", str(server["url"]), limit=8192)


def test_fetch_stops_an_answer_that_trickles_past_its_deadline(server):
    """Each byte comes within the read timeout; the whole does not come within the deadline."""
    server["chunks"], server["pause"] = [b"x"] * 200, 0.05
    with pytest.raises(TimeoutError):
        outbound.fetch("GET", str(server["url"]), seconds=1)


def test_fetch_refuses_what_the_rule_bars(settings):
    with pytest.raises(outbound.Refused):
        outbound.fetch("GET", "http://127.0.0.1:9/")
    with pytest.raises(outbound.Refused):
        outbound.fetch("GET", "file:///etc/passwd")
