"""The outbound address rule: where Brain may connect when a member chose the destination.

Members type hosts and URLs that Brain then connects to from inside the operator's network: the
IMAP server of a connection, the metadata document of an OAuth client, the Slack webhook of a
contact. Such a host could name the cloud's metadata service, a database on the private network or
a port of Brain's own machine, and what came back (or how the attempt failed) would tell the member
what is there. So every such connection goes through here:

- ``check`` resolves the name once and refuses it unless every address it gives is a global one,
  or the operator lists the name, or a network holding the address, in ``BRAIN_OUTBOUND_ALLOW``;
- ``connect`` opens a socket to those checked addresses only and never asks the resolver again, so
  a name that answered with a public address for the check cannot answer with an internal one for
  the connection; TLS and the Host header still use the name;
- ``pin`` does the same for an HTTP client, which then connects to the address in place of the
  name in the URL;
- ``fetch`` makes one HTTP request that way: pinned to the checked addresses, no redirect
  followed, the answer read against one deadline and a size limit, so a server that trickles bytes
  or sends without end cannot hold a worker or its memory;
- ``unreachable`` words every failure to reach a destination the same way, whether the address was
  refused, the port closed or silent, or the handshake or the certificate bad, and logs the detail
  for the operator.

Destinations the operator configured (the LLM and embeddings endpoints, SMTP, the Slack, Twilio,
GitHub and Sentry API addresses) are the operator's own choice and do not pass through here.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import urllib3
from django.conf import settings
from django.http.request import validate_host

log = logging.getLogger("brain.outbound")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: its last 32 bits are an IPv4 address


class Refused(OSError):
    """The destination is not one Brain may reach. Its text is for the log, never for the member."""


@dataclass(frozen=True)
class Destination:
    """A host and port that passed the rule, with the addresses that were checked."""

    host: str  # as typed, in lower case without brackets: what TLS checks the certificate for
    port: int
    addresses: tuple[str, ...]


@dataclass(frozen=True)
class PinnedURL:
    """A URL whose host passed the rule, for an HTTP client that connects to the host its URL names:
    the URL with the first checked address in place of the host, the Host header to send, and the
    name TLS checks the certificate for (httpx's ``sni_hostname`` extension)."""

    url: str
    host_header: str
    server_name: str


def timeout_seconds() -> float:
    return float(settings.BRAIN_OUTBOUND_TIMEOUT_SECONDS)


def resolve(host: str, port: int) -> list[str]:
    """Every address the resolver gives for a host, in its order; the rule's only lookup."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def check(host: str, port: int) -> Destination:
    """The destination, resolved once; Refused when it may not be reached."""
    name = host.strip().removeprefix("[").removesuffix("]").rstrip(".").lower()
    try:
        addresses = resolve(name, port) if name else []
    except (OSError, UnicodeError) as exc:
        raise Refused(f"{host!r} does not resolve ({exc})") from exc
    if not addresses:
        raise Refused(f"{host!r} resolves to no address")
    if not _named_by_operator(name):
        barred = [address for address in addresses if not _may_reach(address)]
        if barred:
            raise Refused(
                f"{name} resolves to {', '.join(barred)}, which is not a global address and not in BRAIN_OUTBOUND_ALLOW"
            )
    return Destination(host=name, port=port, addresses=tuple(addresses))


def pin(url: str) -> PinnedURL:
    """An http(s) URL checked by the rule (Refused) and pinned to its first checked address;
    ValueError when it is no http(s) URL with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http or https URL with a host")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    destination = check(parts.hostname, port)
    address = destination.addresses[0]
    netloc = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    return PinnedURL(
        url=urlunsplit(parts._replace(netloc=netloc)),
        host_header=parts.netloc.rpartition("@")[2],
        server_name=destination.host,
    )


def open_socket(address: tuple[str, int], timeout: float) -> socket.socket:
    """A TCP connection to one checked address."""
    return socket.create_connection(address, timeout=timeout)


def connect(destination: Destination, *, timeout: float | None = None) -> socket.socket:
    """A socket to the first checked address that accepts, all of them tried within one timeout;
    the socket keeps that timeout for what is read next (a greeting, a TLS handshake)."""
    seconds = timeout or timeout_seconds()
    deadline = time.monotonic() + seconds
    failure: OSError = Refused(f"{destination.host} has no address to try")
    for address in destination.addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            failure = TimeoutError(f"no address of {destination.host} accepted within {seconds:g} s")
            break
        try:
            sock = open_socket((address, destination.port), left)
        except OSError as exc:
            failure = exc
            continue
        sock.settimeout(seconds)
        return sock
    raise failure


@dataclass(frozen=True)
class Answer:
    """What ``fetch`` read: the status, the headers (names in lower case) and the whole body."""

    status: int
    headers: dict[str, str]
    body: bytes


def pinned_connection(destination: Destination, *, https: bool) -> type[urllib3.connection.HTTPConnection]:
    """An urllib3 connection class whose socket goes to the addresses the rule checked, while TLS
    checks the certificate for the host's name."""
    base = urllib3.connection.HTTPSConnection if https else urllib3.connection.HTTPConnection

    class Pinned(base):  # type: ignore[valid-type,misc]
        def _new_conn(self) -> socket.socket:
            seconds = self.timeout if isinstance(self.timeout, int | float) else None
            try:
                return connect(destination, timeout=seconds)
            except OSError as exc:
                raise urllib3.exceptions.NewConnectionError(self, f"could not connect: {exc}") from exc

    return Pinned


def fetch(
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    limit: int = 1_000_000,
    seconds: float | None = None,
) -> Answer:
    """One HTTP request to a URL a member chose, under the rule: Refused for a destination the rule
    bars; OSError (a TimeoutError for an answer too slow, a ValueError-free OSError for one too
    long or a broken connection) otherwise. A redirect is returned as it is, never followed."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"{url!r} is no http or https URL with a host")
    https = parts.scheme == "https"
    destination = check(parts.hostname, parts.port or (443 if https else 80))
    seconds = seconds or timeout_seconds()
    deadline = time.monotonic() + seconds
    pool_class = urllib3.HTTPSConnectionPool if https else urllib3.HTTPConnectionPool
    pool = pool_class(
        host=destination.host,
        port=destination.port,
        timeout=urllib3.Timeout(connect=seconds, read=seconds),
        retries=False,
        maxsize=1,
    )
    pool.ConnectionCls = pinned_connection(destination, https=https)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        answer = pool.urlopen(
            method,
            target,
            body=body,
            headers={"Host": parts.netloc.rpartition("@")[2], **(headers or {})},
            redirect=False,
            preload_content=False,
        )
        try:
            read = b""
            while piece := answer.read1(16384):
                read += piece
                if len(read) > limit:
                    raise OSError(f"the answer of {destination.host} is longer than {limit} bytes")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the answer of {destination.host} took longer than {seconds:g} s")
            return Answer(answer.status, {k.lower(): v for k, v in answer.headers.items()}, read)
        finally:
            answer.release_conn()
    except urllib3.exceptions.HTTPError as exc:
        raise OSError(f"{destination.host} could not be asked: {exc}") from exc
    finally:
        pool.close()


def unreachable(what: str, *, host: str, port: int, error: BaseException) -> str:
    """What to tell a member when a destination they chose could not be used: the same words for
    every cause, so that the answer cannot map the network behind Brain. The cause is logged."""
    bare = host.removeprefix("[").removesuffix("]")
    where = f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"
    log.warning("%s %s could not be reached: %s: %s", what, where, type(error).__name__, error)
    return (
        f"{what} {where} could not be reached: Brain found no server there that it may use and trusts. "
        "Check the host and the port; the operator's log holds the reason."
    )


def _named_by_operator(name: str) -> bool:
    names = [entry for entry in settings.BRAIN_OUTBOUND_ALLOW if _network(entry) is None]
    return bool(names) and validate_host(name, names)


def _may_reach(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    networks = [net for entry in settings.BRAIN_OUTBOUND_ALLOW if (net := _network(entry)) is not None]
    return any(ip.version == net.version and ip in net for net in networks) or _global(ip)


def _global(ip: IPAddress) -> bool:
    """Whether an address is on the public internet. An IPv6 address that carries an IPv4 one
    (mapped, 6to4, Teredo, NAT64) must carry a global one too: a resolver's AAAA answer must not
    bring 10.0.0.1 or 169.254.169.254 in under another form."""
    carried: list[ipaddress.IPv4Address] = []
    if isinstance(ip, ipaddress.IPv6Address):
        carried = [part for part in (ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())) if part is not None]
        if ip in NAT64:
            carried.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    special = ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved or ip.is_unspecified
    return ip.is_global and not special and all(_global(part) for part in carried)


def _network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(entry.replace("[", "").replace("]", ""), strict=False)
    except ValueError:
        return None
