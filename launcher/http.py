"""uvicorn's httptools protocol, with bounds on what one connection, or many, may hold.

``launcher.processes.HTTP_PARSER`` names it for every web server. What it adds to uvicorn's own:

- **Bytes.** uvicorn's pure-Python parser (h11) refuses a request whose line and headers pass
  16 KB; the C parser (httptools) keeps whatever arrives before the blank line that ends them, and
  uvicorn adds every trailer field after a chunked body to the request's headers. Measured: one
  200 MB header took a server from 70 to 388 MB, and 1.5 GB of trailers one from 554 to 1,918 MB.
  Here the bytes of reads in which a connection makes no progress (no head ended, no body read, no
  request ended) are counted; past ``MAX_HEAD_BYTES`` the request is answered 400 and its
  connection closed, so the server holds at most that and one read more. That covers a head still
  open and trailers alike. Like h11, it leaves alone a head that ends within the read that holds it
  (a long URL sent at once). Trailer fields are dropped (RFC 9110 lets a recipient discard them):
  Brain needs none, and a header added after the head was read could pass for one sent with it.
- **Time.** uvicorn closes a connection only when it stays idle after a response
  (``timeout_keep_alive``): not one that never sends a request, nor one that sends a head a byte at
  a time, since every byte restarts nothing but that timer. Here a head must arrive whole within
  ``Limits.head_seconds`` of the connection being made, or of the first byte sent towards it
  on a kept-alive connection; a connection that sent nothing is then closed, one that sent part
  of a head is answered 408.
- **Connections.** At most ``Limits.max_connections`` open in all and ``Limits.max_per_address``
  from one address; past either, a new connection is answered 503 with ``Retry-After`` at once
  and closed. Loopback (health checks in the container) may go ``LOOPBACK_RESERVE`` past the
  total.

The limits come from the environment (docs/configuration.md), per web process.
"""

from __future__ import annotations

import ipaddress
import logging
import resource
import time
import weakref
from asyncio import TimerHandle
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as UvicornHttpTools
from uvicorn.server import ServerState

from brain.infra.env import env_int

# h11's own default (``max_incomplete_event_size``): what Brain's web server accepted before.
MAX_HEAD_BYTES = 16 * 1024
TOO_LARGE = "The request line and headers (or trailers) are too large."
# Connections from loopback beyond the total, so the container's health check gets through a full server.
LOOPBACK_RESERVE = 8
# A refused or timed-out connection is answered, its sending side closed, and what the client still
# sends read and dropped this long: closing at once, with its request unread, would reset the
# connection and could discard the answer before the client read it.
LINGER_SECONDS = 1.0
# Open files a web process needs besides its connections: database connections, static files, logs.
OTHER_FILES = 256
REFUSALS_LOGGED_EVERY = 60.0

logger = logging.getLogger("uvicorn.error")


@dataclass(frozen=True)
class Limits:
    head_seconds: int  # to send a request's line and headers
    keep_alive_seconds: int  # idle between requests
    max_connections: int  # open at once, in all
    max_per_address: int  # open at once from one address (an IPv6 /64); 0: no limit

    @classmethod
    def from_env(cls) -> Limits:
        return cls(
            head_seconds=env_int("BRAIN_HTTP_HEAD_SECONDS", 20, minimum=1, maximum=600),
            keep_alive_seconds=env_int("BRAIN_HTTP_KEEP_ALIVE_SECONDS", 5, minimum=1, maximum=600),
            max_connections=env_int("BRAIN_HTTP_MAX_CONNECTIONS", 1000, minimum=1, maximum=1_000_000),
            max_per_address=env_int("BRAIN_HTTP_MAX_CONNECTIONS_PER_ADDRESS", 100, minimum=0, maximum=1_000_000),
        )


def address_key(host: str) -> str:
    """What the per-address limit counts by: an IPv4 address, or the /64 an IPv6 address is in
    (one host is commonly given a whole /64)."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host  # a Unix socket's peer has none
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def is_local(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == ""  # a Unix socket


def refusal(limits: Limits, *, host: str, open_total: int, open_here: int) -> str | None:
    """Why a new connection from ``host`` is refused, or None to take it; ``open_total`` and
    ``open_here`` count the connections already open, in all and from its address."""
    if open_total >= limits.max_connections + (LOOPBACK_RESERVE if is_local(host) else 0):
        return f"The server has {open_total} connections open, the most it takes. Try again shortly."
    if limits.max_per_address and open_here >= limits.max_per_address:
        return (
            f"Your address has {open_here} connections open to this server, the most one address may have. "
            "Close some, or try again shortly."
        )
    return None


@cache
def make_room_for(connections: int) -> None:
    """Raise this process's soft limit on open files to fit ``connections`` and the rest, as far as
    the hard limit allows, so that the connection limit refuses before the process runs out of files."""
    needed = connections + LOOPBACK_RESERVE + OTHER_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    fits = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (fits, hard))
    if fits < needed:
        logger.warning(
            "Open files are limited to %d; BRAIN_HTTP_MAX_CONNECTIONS=%d needs %d. Lower it or raise the limit.",
            fits,
            connections,
            needed,
        )


class _RefusalLog:
    """Refusals logged at most once a minute, with how many there were, so a flood of connections
    does not become a flood of log lines."""

    def __init__(self) -> None:
        self.count, self.logged_at = 0, float("-inf")

    def note(self, reason: str) -> None:
        self.count += 1
        if time.monotonic() - self.logged_at >= REFUSALS_LOGGED_EVERY:
            logger.warning("Refused %d connection(s) since the last report; the last: %s", self.count, reason)
            self.count, self.logged_at = 0, time.monotonic()


LIMITS = Limits.from_env()  # read at start, so a bad value stops the server before it serves
_refusals = _RefusalLog()
# Connections open per address (address_key), per server.
_open_by_server: weakref.WeakKeyDictionary[ServerState, Counter[str]] = weakref.WeakKeyDictionary()


class HttpToolsProtocol(UvicornHttpTools):
    limits = LIMITS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        make_room_for(self.limits.max_connections)
        self.timeout_keep_alive = self.limits.keep_alive_seconds
        self._open = _open_by_server.setdefault(self.server_state, Counter())
        self._address: str | None = None  # counted against this address while open
        self._done = False  # answered and closing: what still arrives is dropped
        self._in_head = True  # from the end of a request (or the connection's start) to the end of the next head
        self._moved = 0  # heads ended, body reads and requests ended: a connection making progress
        self._stalled_bytes = 0  # bytes of the reads since it last made progress
        self._oversized = False
        self._head_begun = False  # a byte of the request line has arrived, and its head has not ended
        self._head_deadline: TimerHandle | None = None

    # Connections

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        host = self.client[0] if self.client else ""
        key = address_key(host)
        reason = refusal(self.limits, host=host, open_total=len(self.connections) - 1, open_here=self._open[key])
        if reason is not None:
            self.connections.discard(self)  # answered and gone within LINGER_SECONDS: not counted
            _refusals.note(reason)
            self._answer_and_close(503, reason, retry_after=self.limits.keep_alive_seconds)
            return
        self._open[key] += 1
        self._address = key
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._release()  # the transport passes to another protocol, which counts in the total only
        super().handle_websocket_upgrade()

    def _release(self) -> None:
        self._disarm_head_deadline()
        if self._address is not None:
            self._open[self._address] -= 1
            if self._open[self._address] <= 0:
                del self._open[self._address]
            self._address = None

    def _answer_and_close(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        """Answer ``status`` with ``message``, close the sending side, and drop what still arrives
        until the client closes or LINGER_SECONDS pass."""
        self._done = True
        self._disarm_head_deadline()
        body = message.encode()
        head = [f"HTTP/1.1 {status} {'Service Unavailable' if status == 503 else 'Request Timeout'}"]
        head += ["content-type: text/plain; charset=utf-8", f"content-length: {len(body)}", "connection: close"]
        head += [f"retry-after: {retry_after}"] if retry_after is not None else []
        self.transport.write("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    # Deadlines

    def _waiting_for_head(self) -> bool:
        return self._in_head and (self.cycle is None or self.cycle.response_complete)

    def _arm_head_deadline(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(self.limits.head_seconds, self._head_too_slow)

    def _disarm_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if self.transport.is_closing() or self._done or not self._waiting_for_head():
            return  # answering a request: what the client sends meanwhile waits for the answer
        if not self._head_begun:
            self.transport.close()  # nothing sent towards a request
        else:
            self.logger.warning("A request's line and headers took over %d s; refused.", self.limits.head_seconds)
            message = f"The request line and headers did not arrive within {self.limits.head_seconds} seconds."
            self._answer_and_close(408, message)

    # Parsing

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        if self._waiting_for_head():
            self._arm_head_deadline()
        moved = self._moved
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._moved != moved:
            # This read made progress: what came before it was bounded, and what follows it here
            # (a body, the next head's first bytes) is at most this one read.
            self._stalled_bytes = 0
            return
        # A read wholly inside a head or trailers: counted, and refused past the bound without
        # waiting for an end that may never come.
        self._stalled_bytes += len(data)
        if self._stalled_bytes > MAX_HEAD_BYTES:
            self._cut_oversized()

    def _cut_oversized(self) -> None:
        self._oversized = True
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # trailers of a request being answered
            cycle.disconnected = True  # the application gets http.disconnect and writes nothing more
            cycle.message_event.set()
            if cycle.response_started:
                self.logger.warning("A request's trailers passed %d bytes; closed.", MAX_HEAD_BYTES)
                self.transport.close()  # too late for a 400
                return
        self.send_400_response(TOO_LARGE)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_begun = True

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._in_head:  # after the head a field is a trailer, dropped
            super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head, self._head_begun = False, False
        self._moved += 1
        self._disarm_head_deadline()
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._moved += 1
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True
        self._moved += 1

    def send_400_response(self, msg: str) -> None:
        if self._oversized:
            self.logger.warning("A request's line and headers (or trailers) passed %d bytes; refused.", MAX_HEAD_BYTES)
        super().send_400_response(TOO_LARGE if self._oversized else msg)
