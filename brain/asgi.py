"""The ASGI application: /mcp goes to the MCP app, everything else to Django.

The MCP app also receives the lifespan events (its session manager needs them); Django's
ASGI handler does not take lifespan.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from brain.infra.logs import RequestIds  # noqa: E402
from brain.infra.request_connections import ClosingConnections  # noqa: E402
from brain.mcp.gateway import McpGateway  # noqa: E402
from brain.mcp.server import build_app  # noqa: E402

# Every request gets an id first (brain.infra.logs), so each line logged while serving it carries it.
application = RequestIds(McpGateway(mcp_app=build_app(), django_app=ClosingConnections(django_app)))
