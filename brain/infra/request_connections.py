"""Page and REST requests under ASGI close their database connections when they end.

Django runs each request's view on a thread made for that request, which ends with it. A
connection kept for reuse (``BRAIN_DB_CONN_MAX_AGE``) would stay open on the server, idle and
owned by no thread, until the process exits: one web process answering 100 concurrent requests
held about a hundred. So the connections a request's thread opened are closed as it finishes,
whatever the setting. MCP calls run on a pool of threads that live as long as the process
(``brain.mcp.server.in_worker_thread``), and workers reuse their connection, so both keep the
setting's reuse.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from django.core.signals import request_finished
from django.db import connections
from django.dispatch import receiver

# Set while an ASGI request is handed to Django; asgiref carries it into the request's thread.
_asgi_request: ContextVar[bool] = ContextVar("brain_asgi_request", default=False)


class ClosingConnections:
    """ASGI middleware in front of Django's handler that marks its requests as ASGI ones."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = _asgi_request.set(True)
        try:
            await self.app(scope, receive, send)
        finally:
            _asgi_request.reset(token)


@receiver(request_finished, dispatch_uid="brain.infra.request_connections")
def close_request_connections(**kwargs: Any) -> None:
    """Close this thread's connections at the end of an ASGI request (not of a test client's)."""
    if _asgi_request.get():
        for connection in connections.all(initialized_only=True):
            connection.close()
