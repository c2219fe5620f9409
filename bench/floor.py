"""The floor for ``bench.mcp_calls --floor``: a bare server on the official ``mcp`` SDK with one
trivial tool, served as Brain's /mcp is (the low-level ``Server``, streamable HTTP, stateless,
JSON answers), without Django, a database, authentication or metering.

    uvicorn bench.floor:app

Whatever Brain takes beyond this server is Brain's own path: token, actor, checks, charge, call
record, its tool and the hops to Django's threads.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

PROFILE = {"profile_id": "p_1", "email": "bench@example.com", "name": "bench", "organisation": "Bench"}
TOOL = types.Tool(
    name="get_profile",
    description="A fixed profile, for measuring the SDK's own path.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
)


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    text = f"{PROFILE['name']} <{PROFILE['email']}> in {PROFILE['organisation']} (profile {PROFILE['profile_id']})"
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=dict(PROFILE))


def build_app() -> Starlette:
    server: Server[Any] = Server("floor", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


app = build_app()
