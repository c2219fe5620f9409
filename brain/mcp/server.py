"""The MCP endpoint: the SDK's low-level server, our registry, and per-caller tool lists."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any, TypeVar

import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from starlette.applications import Starlette

import brain
from brain.core.actors import Actor
from brain.core.errors import DomainError
from brain.mcp import sessions
from brain.mcp.auth import ApiTokenVerifier, current_caller
from brain.mcp.invoke import GENERIC_FAILURE, execute, run_prompt
from brain.mcp.registry import PROMPTS, TOOLS, ToolSpec, visible_tools
from brain.mcp.threads import in_pool

T = TypeVar("T")
logger = logging.getLogger("brain.calls")

INSTRUCTIONS = (
    "Brain is this organisation's company memory. Call init first: it returns the rules for using "
    "Brain and the skills you may load. Brain returns evidence (passages, facts, sources); you write "
    "the answer from it and say so when the evidence does not answer the question."
)


@cache  # a tool's definition never changes while the process runs; its schemas took ~2 ms each to build
def _tool_definition(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema(),
        output_schema=spec.output_schema(),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=spec.open_world,
        ),
    )


def _error_result(
    message: str, *, code: str = "", details: dict[str, Any] | None = None, retryable: bool = False
) -> types.CallToolResult:
    """The message first, for the model; then, when there is a code, the error as JSON for programs.

    Not in ``structuredContent``: a client may check that against the tool's output schema."""
    content = [types.TextContent(text=message)]
    if code:
        error = {"code": code, "details": details or {}, "retryable": retryable}
        content.append(types.TextContent(text=json.dumps({"error": error}, ensure_ascii=False, default=str)))
    return types.CallToolResult(content=content, is_error=True)


def in_worker_thread(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """Run sync ORM code off the event loop (``brain.mcp.threads``), managing connections as
    Django's request cycle would."""

    def wrapped(*args: Any) -> T:
        close_old_connections()
        try:
            return fn(*args)
        finally:
            close_old_connections()

    async def hop(*args: Any) -> T:
        return await in_pool(wrapped, *args)

    return hop


def run_tool(actor: Actor, spec: ToolSpec, arguments: dict[str, Any]) -> types.CallToolResult:
    outcome = execute(actor, spec, arguments)
    if outcome.output is None:
        return _error_result(outcome.message, code=outcome.code, details=outcome.details, retryable=outcome.retryable)
    return types.CallToolResult(
        content=[types.TextContent(text=outcome.output.to_text())],
        structured_content=outcome.output.model_dump(mode="json"),
    )


def _client_info(ctx: ServerRequestContext[Any, Any]) -> dict[str, str]:
    """The assistant app's name and version and the session, from the session id Brain handed
    out at ``initialize`` (``brain.mcp.sessions``), or from the SDK's session where it kept the
    handshake; and the HTTP client's user agent."""
    headers = getattr(ctx.request, "headers", None)
    info = sessions.read(headers.get(sessions.HEADER, "")) if headers is not None else {}
    params = getattr(ctx.session, "client_params", None)
    client = getattr(params, "client_info", None)
    if client is not None:
        info["name"] = str(getattr(client, "name", "") or "")
        info["version"] = str(getattr(client, "version", "") or "")
    if headers is not None:
        info["user_agent"] = headers.get("user-agent", "")
    return info


async def list_tools(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    actor, features = current_caller()
    return types.ListToolsResult(
        tools=[_tool_definition(spec) for spec in visible_tools(scopes=actor.scopes, features=features)]
    )


async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    actor, _ = current_caller()
    spec = TOOLS.get(params.name)
    if spec is None:
        return _error_result(f"There is no tool named {params.name!r}. Call tools/list to see the tools you can use.")
    actor = dataclasses.replace(actor, client=_client_info(ctx))
    return await in_worker_thread(run_tool)(actor, spec, params.arguments or {})


async def list_prompts(
    ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    current_caller()
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=spec.name,
                title=spec.title,
                description=spec.description,
                arguments=[types.PromptArgument(name=n, description=d, required=r) for n, d, r in spec.arguments],
            )
            for spec in PROMPTS.values()
        ]
    )


async def get_prompt(
    ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    actor, _ = current_caller()
    spec = PROMPTS.get(params.name)
    if spec is None:
        raise MCPError(code=INVALID_PARAMS, message=f"No prompt named {params.name!r}; see prompts/list.")
    arguments = params.arguments or {}
    missing = [n for n, _, required in spec.arguments if required and not arguments.get(n, "").strip()]
    if missing:
        raise MCPError(code=INVALID_PARAMS, message=f"Prompt {spec.name} needs: {', '.join(missing)}.")
    actor = dataclasses.replace(actor, client=_client_info(ctx))
    try:
        text = await in_worker_thread(run_prompt)(actor, spec, arguments)
    except DomainError as exc:  # a refusal, out of credits included: its code for programs, as tools give it
        error = {"code": exc.code, "details": exc.details, "retryable": exc.retryable}
        data = json.loads(json.dumps(error, default=str))
        raise MCPError(code=INVALID_PARAMS, message=exc.message, data=data) from None
    except Exception:  # like execute: logged, and the client learns nothing of the internals
        logger.exception("prompt %s failed", spec.name)
        raise MCPError(code=INTERNAL_ERROR, message=GENERIC_FAILURE.format(tool=f"the prompt {spec.name}")) from None
    return types.GetPromptResult(
        description=spec.description, messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))]
    )


def build_server() -> Server[Any]:
    return Server(
        "brain",
        version=brain.__version__,
        title="Brain company memory",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def build_app() -> Starlette:
    """The SDK's streamable HTTP app: stateless, JSON responses, bearer tokens."""
    server = build_server()
    base = settings.BRAIN_BASE_URL
    return server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.BRAIN_MAX_REQUEST_BYTES,  # brain.mcp.gateway answers past it first
        # Host and Origin are checked by brain.asgi before authentication, with Django's rules.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        # brn_ tokens from the Connect page and OAuth access tokens (brain.oauth) both go through
        # ApiTokenVerifier, which checks an OAuth token's resource itself. The discovery documents
        # are Django's (brain.oauth.views) and the 401's pointer to them is added by the gateway,
        # both from BRAIN_BASE_URL as it is when asked.
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=None,
            required_scopes=["read"],
            validate_token_resource=False,
        ),
        token_verifier=ApiTokenVerifier(),
    )
