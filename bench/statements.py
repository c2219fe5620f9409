"""Brain's ASGI application, counting the SQL statements each /mcp request runs (``bench.profile``).

    uvicorn --factory bench.statements:build   # instead of brain.asgi:application

Only this module counts: ``brain.asgi`` is unchanged and pays nothing. Every database connection
the process opens gets an execute wrapper (Django's ``connection.execute_wrappers``) that adds
the statement, and the stage of the call it ran for (``bench.stages``, from the Python stack),
to the request being served. The request is found through a context variable, which Django's
``sync_to_async`` threads and the SDK's tasks inherit from the request that started them.

Each answer carries ``x-bench-statements: <count>``; with ``BENCH_STATEMENTS_LOG`` set to a
path, each request also appends a JSON line there: ``{"path": ..., "statements": [[stage,
"SELECT brain_apitoken"], ...]}``. Statements run outside any request (start-up) are not counted.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.db.backends.signals import connection_created
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bench.stages import Frame, classify

HEADER = b"x-bench-statements"
_REQUEST: ContextVar[list[tuple[str, str]] | None] = ContextVar("bench_statements", default=None)
_write_lock = threading.Lock()


def head(sql: str) -> str:
    """The statement's verb and first table: ``SELECT brain_apitoken``, ``INSERT brain_toolcall``."""
    verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else "?"
    outer, inner = sql, ""
    while outer != inner:  # drop subqueries: the table named is the statement's own
        inner, outer = outer, re.sub(r"\([^()]*\)", "", outer)
    table = re.search(r'\b(?:FROM|INTO|UPDATE)\s+"?([\w.]+)"?', outer, re.IGNORECASE)
    return f"{verb} {table.group(1)}" if table else verb


def _stack() -> list[Frame]:
    frames: list[Frame] = []
    frame = sys._getframe(2)
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_code.co_qualname))
        frame = frame.f_back  # type: ignore[assignment]
    return frames[::-1]


def counting(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    statements = _REQUEST.get()
    if statements is not None:
        statements.append((classify(_stack()), head(sql)))
    return execute(sql, params, many, context)


def install(sender: Any, connection: Any, **kwargs: Any) -> None:
    if counting not in connection.execute_wrappers:
        connection.execute_wrappers.append(counting)


class CountingStatements:
    def __init__(self, app: ASGIApp, *, log: str = "") -> None:
        self.app = app
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        statements: list[tuple[str, str]] = []
        _REQUEST.set(statements)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                count = str(len(statements)).encode()
                message = {**message, "headers": [*message.get("headers", []), (HEADER, count)]}
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            _REQUEST.set(None)
            if self.log:
                line = json.dumps({"path": scope.get("path", ""), "statements": statements})
                with _write_lock, open(self.log, "a") as out:
                    out.write(line + "\n")


def build() -> CountingStatements:
    connection_created.connect(install, dispatch_uid="bench.statements")
    from brain.asgi import application as brain_application

    return CountingStatements(brain_application, log=os.environ.get("BENCH_STATEMENTS_LOG", ""))
