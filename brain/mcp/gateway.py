"""Route requests between the MCP app and Django, and guard /mcp before authentication."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brain.infra.unavailable import database_away, database_unavailable, internal_failure
from brain.mcp import sessions
from brain.mcp.registry import TOOLS

logger = logging.getLogger("brain.calls")
INTERNAL_ERROR = -32603  # JSON-RPC's own code for a server failure
MCP_PATH = "/mcp"


DEFAULT_PORTS = {"http": 80, "https": 443}
ANY_PORT = ":*"


def _origin_parts(value: str, *, strict: bool) -> tuple[str, str, int | None] | None:
    """Scheme, host and port of an origin, or None when it is not one.

    ``strict`` is for what a browser sent: nothing after the port, no user, a numeric port.
    Configured patterns may carry a path (a base URL); only their origin counts.
    """
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None  # "http://127.0.0.1:8000.evil.example" has no numeric port: not an origin
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if strict and (parts.path or parts.query or parts.fragment):
        return None
    return parts.scheme, parts.hostname, port if port is not None else DEFAULT_PORTS[parts.scheme]


def origin_allowed(origin: str, allowed: list[str]) -> bool:
    """Whether a browser Origin is one of ``allowed``: the whole scheme, host and port must match.

    A pattern ending in ``:*`` (``http://127.0.0.1:*``) matches its scheme and host with any port.
    """
    if not origin:
        return True  # non-browser clients send no Origin
    sent = _origin_parts(origin, strict=True)
    if sent is None:
        return False
    for pattern in allowed:
        any_port = pattern.endswith(ANY_PORT)
        wanted = _origin_parts(pattern.removesuffix(ANY_PORT) if any_port else pattern, strict=False)
        if wanted is None:
            continue
        if sent[:2] == wanted[:2] and (any_port or sent[2] == wanted[2]):
            return True
    return False


def host_allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


async def _plain(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            + (headers or []),
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once it is larger than ``limit`` (declared or sent)."""
    declared = dict(scope.get("headers", [])).get(b"content-length", b"")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away: what came is passed on, and the answer reaches nobody
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _too_large(send: Send, limit: int) -> None:
    # Shaped as a JSON-RPC error, like the SDK's own answers to requests it cannot take.
    message = f"The request body is larger than Brain's limit of {limit:,} bytes; send less in one request."
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _request(body: bytes) -> tuple[object, bool]:
    """The JSON-RPC id of the request, and whether it may have written: a call of a tool that writes."""
    try:
        message = json.loads(body)
    except ValueError:
        return None, False
    if not isinstance(message, dict):
        return None, False
    params = message.get("params")
    name = str(params.get("name", "")) if isinstance(params, dict) else ""
    spec = TOOLS.get(name) if message.get("method") == "tools/call" else None
    return message.get("id"), spec is not None and not spec.read_only


async def _answering_failures(app: ASGIApp, scope: Scope, receive: Receive, send: Send, body: bytes) -> None:
    """Run the MCP app; what escapes it (the token check while the database is away, a bug) is
    answered as a JSON-RPC error like ``execute``'s, never as the framework's plain-text 500.

    Starlette answers an unhandled exception with a plain-text 500 and then raises it again; that
    answer is held back, and the error, once it arrives, is answered instead."""
    started = held = False

    async def guarded(message: Message) -> None:
        nonlocal started, held
        if message["type"] == "http.response.start" and not started:
            kind = dict(message.get("headers", [])).get(b"content-type", b"")
            if message["status"] == 500 and kind.startswith(b"text/plain"):
                held = True
                return
            started = True
        elif held and not started:
            return
        await send(message)

    try:
        await app(scope, receive, guarded)
    except Exception as exc:
        if started:
            raise
        await _failed(send, exc, *_request(body))
        return
    if held and not started:
        await _failed(send, RuntimeError("the MCP app answered 500"), *_request(body))


async def _failed(send: Send, exc: BaseException, request_id: object, writes: bool) -> None:
    if database_away(exc):
        logger.warning("an MCP request failed: the database is not answering: %s", exc)
        refused = database_unavailable(what="This MCP request", writes=writes)
        status, code, message, retryable = refused.status, refused.code, refused.message, True
    else:
        logger.error("an MCP request failed", exc_info=exc)
        status, code, retryable = 500, "internal", False
        message = internal_failure(what="This MCP request", writes=writes)
    error = {"code": INTERNAL_ERROR, "message": message, "data": {"code": code, "retryable": retryable}}
    payload = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    if retryable:
        headers.append((b"retry-after", b"60"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def _with_discovery(send: Send) -> Send:
    """Point a 401 at the protected-resource metadata (RFC 9728), read from the settings on each
    answer, so an OAuth client finds Brain's authorisation server from the refusal alone."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 401:
            where = f"{settings.BRAIN_BASE_URL}/.well-known/oauth-protected-resource{MCP_PATH}"
            value = f'Bearer error="invalid_token", error_description="Sign in first", resource_metadata="{where}"'
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"www-authenticate"]
            message = {**message, "headers": [*kept, (b"www-authenticate", value.encode())]}
        await send(message)

    return sending


def _with_session(send: Send, session_id: str) -> Send:
    """Add the session id to a successful answer (``brain.mcp.sessions``)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] < 400:
            extra = [(sessions.HEADER.encode(), session_id.encode())]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


class McpGateway:
    def __init__(self, *, mcp_app: ASGIApp, django_app: Any) -> None:
        self.mcp_app = mcp_app
        self.django_app = django_app
        base = settings.BRAIN_BASE_URL
        self.allowed_origins = [*settings.BRAIN_ALLOWED_ORIGINS, base]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.mcp_app(scope, receive, send)
            return
        path = scope.get("path", "")
        if scope["type"] == "http" and path.rstrip("/") == MCP_PATH:
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
            if not host_allowed(headers.get("host", "")):
                await _plain(send, 421, "Host not allowed; add it to ALLOWED_HOSTS.")
                return
            if not origin_allowed(headers.get("origin", ""), self.allowed_origins):
                await _plain(send, 403, "Origin not allowed; add it to BRAIN_ALLOWED_ORIGINS.")
                return
            if scope["method"] == "GET":
                # Stateless JSON server: no server-to-client stream to open.
                await _plain(send, 405, "Use POST for MCP requests.", [(b"allow", b"POST")])
                return
            body = await _read_body(scope, receive, settings.BRAIN_MAX_REQUEST_BYTES)
            if body is None:
                await _too_large(send, settings.BRAIN_MAX_REQUEST_BYTES)
                return
            scope = dict(scope, path=MCP_PATH, raw_path=MCP_PATH.encode())
            minted = None if headers.get(sessions.HEADER) else sessions.for_initialize(body)
            answer = _with_discovery(send if minted is None else _with_session(send, minted))
            await _answering_failures(self.mcp_app, scope, _replay(body, receive), answer, body)
            return
        await self.django_app(scope, receive, send)
