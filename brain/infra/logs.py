"""Log lines an operator can follow: a request id from the request into the tasks it queues, and
one JSON object per line when ``BRAIN_LOG_FORMAT=json`` (docs/operations.md, "Metrics and logs").

A request's id is the caller's ``X-Request-ID`` when it is a sensible one (letters, digits and
``-_.:``, up to 128 characters), else a new one; it is answered in the response's
``X-Request-ID`` header. It lives in a context variable for the request, so every line logged while
serving it carries it, in the request's own thread and in the threads Django and the MCP server run
its work on (both copy the context). A Celery message published meanwhile carries it in a header,
and the worker sets it again while it runs that task, so the worker's lines show the same id. A
task queued later by a sweep (a message the broker missed) starts a new id.
"""

from __future__ import annotations

import json
import logging
import re
import traceback
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID: ContextVar[str] = ContextVar("brain_request_id", default="")
ORG: ContextVar[str] = ContextVar("brain_org", default="")

HEADER = "X-Request-ID"
TASK_HEADER = "brain_request_id"
TASK_ORG_HEADER = "brain_org"
_SENSIBLE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def new_request_id() -> str:
    return uuid.uuid4().hex


def request_id_from(sent: str | None) -> str:
    """The caller's id when it is a sensible one, else a new one (a header is the caller's to fill
    with anything: it must not break a log line or a log search)."""
    if sent and _SENSIBLE.fullmatch(sent):
        return sent
    return new_request_id()


@contextmanager
def bound(*, request_id: str | None = None, org: str | None = None) -> Iterator[None]:
    """Set the request id and/or the organisation for the lines logged inside the block."""
    tokens = []
    if request_id is not None:
        tokens.append((REQUEST_ID, REQUEST_ID.set(request_id)))
    if org is not None:
        tokens.append((ORG, ORG.set(org)))
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


class RequestIds:
    """ASGI middleware around the whole application (MCP and Django alike): take or make the id,
    bind it for the request, and answer it in the ``X-Request-ID`` header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sent = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"x-request-id"), None)
        request_id = request_id_from(sent)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*kept, (b"x-request-id", request_id.encode())]}
            await send(message)

        with bound(request_id=request_id):
            await self.app(scope, receive, sending)


# --- Celery: the id travels in the message's headers ----------------------------------------------
def _published(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is None:
        return
    if request_id := REQUEST_ID.get():
        headers[TASK_HEADER] = request_id
    if org := ORG.get():
        headers[TASK_ORG_HEADER] = org


def _task_started(task: Any = None, **_: Any) -> None:
    request = getattr(task, "request", None)
    REQUEST_ID.set(request_id_from(getattr(request, TASK_HEADER, None)))
    org = getattr(request, TASK_ORG_HEADER, None)
    ORG.set(org if isinstance(org, str) else "")


def _task_ended(**_: Any) -> None:
    # Emptied rather than reset to a token: a worker's pool runs one task at a time per thread, and
    # prerun and postrun are not sure to share one context in every pool.
    REQUEST_ID.set("")
    ORG.set("")


def connect_task_signals() -> None:
    """Carry the id into the messages this process publishes, and out of the tasks it runs."""
    from celery import signals

    signals.before_task_publish.connect(_published, weak=False)
    signals.task_prerun.connect(_task_started, weak=False)
    signals.task_postrun.connect(_task_ended, weak=False)


# --- Formatting ---------------------------------------------------------------------------------------
class RequestContext(logging.Filter):
    """Put the request id and organisation on every record, for any formatter to show."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        record.org = ORG.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, request_id, org, and
    the exception's traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "") or REQUEST_ID.get(),
            "org": getattr(record, "org", "") or ORG.get(),
        }
        if record.exc_info:
            line["exception"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False, default=str)


def log_json_lines() -> None:
    """JSON lines on stderr from the root logger, warnings included, before the settings configure
    logging (they replace this handler with their own, which formats the same)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestContext())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    logging.captureWarnings(True)
