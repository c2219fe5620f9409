"""The tool registry. Each app's ``mcp_tools.py`` registers its tools here with ``@mcp_tool``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from brain.core.actors import Actor
from brain.core.personal import SHARED, may_write
from brain.mcp.prices import BILLINGS, CALL


class ToolOutput(BaseModel):
    """Base for tool results: ``structuredContent`` is the model, the text part is ``to_text()``."""

    def to_text(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_none=True), ensure_ascii=False, separators=(",", ":"))


ArgsT = TypeVar("ArgsT", bound=BaseModel)
OutT = TypeVar("OutT", bound=ToolOutput)
ToolFn = Callable[[Actor, Any], ToolOutput]

# What a tool that is not read-only writes, for a connection limited to personal memories
# (``brain.core.personal``): SHARED, what other people read (hidden from and refused to it before the
# tool runs; the default); SCOPED, personal or shared by its arguments or its target, which the
# service checks with ``brain.core.personal.require_may_write``; OWN, only the caller's own records that
# are no one else's knowledge (a report, feedback).
SCOPED, OWN = "scoped", "own"
WRITES = (SHARED, SCOPED, OWN)
# A tool whose description starts with this changes something in another system (a connector's
# ACTION tool): it is offered only where an admin granted it, and runs only when asked for.
ACTION = "ACTION:"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args: type[BaseModel]
    output: type[ToolOutput]
    fn: ToolFn
    scope: str  # "read" or "write": the token scope needed to see and call it
    feature: str | None  # an organisation feature that must be on, or None
    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool
    billing: str  # what a call costs: one of brain.mcp.prices.BILLINGS
    activity_arg: str | None  # the argument that carries an activity id, for call records
    writes: str | None = None  # None for a read-only tool, else one of WRITES
    connector: str | None = None  # the kind of connection the organisation must have, or None

    @property
    def action(self) -> bool:
        return self.description.startswith(ACTION)

    @property
    def needs(self) -> tuple[str, ...]:
        """The organisation's features the tool needs (``Features.enabled``): its own switch, a
        connection of its kind, and for an ACTION tool an admin's grant."""
        needs = [self.feature] if self.feature else []
        if self.connector:
            needs.append(f"connector:{self.connector}")
        if self.action:
            needs.append(f"grant:{self.name}")
        return tuple(needs)

    def input_schema(self) -> dict[str, Any]:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return schema

    def output_schema(self) -> dict[str, Any]:
        schema = self.output.model_json_schema()
        schema.pop("title", None)
        return schema


TOOLS: dict[str, ToolSpec] = {}


def mcp_tool(
    name: str,
    *,
    title: str,
    args: type[BaseModel],
    output: type[ToolOutput],
    scope: str = "read",
    feature: str | None = None,
    read_only: bool | None = None,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    billing: str | None = None,
    writes: str | None = None,
    connector: str | None = None,
) -> Callable[[Callable[[Actor, ArgsT], OutT]], Callable[[Actor, ArgsT], OutT]]:
    """Register a tool. Its docstring is the description a model reads.

    ``scope`` decides who sees the tool (a read-only token never sees a write tool); ``read_only``
    is the hint clients get, and defaults to ``scope == "read"``. Tools that only record a note
    (reports, feedback) need the read scope but are not read-only. ``billing`` is what a call
    costs (``brain.mcp.prices``): a metered call unless said otherwise. ``writes`` is what a tool that
    is not read-only writes (``WRITES``); one that does not say is taken to write what others read.
    ``connector`` names the kind of connection a connector's tool needs; its name must start with
    that kind. A description starting with ``ACTION:`` makes an action, which only a connector's
    write tool may be, and which writes what others read.
    """
    if scope not in ("read", "write"):
        raise ValueError(f"scope must be read or write, not {scope!r}")
    is_read_only = scope == "read" if read_only is None else read_only
    if is_read_only and writes is not None:
        raise ValueError(f"MCP tool {name!r} is read-only, so it writes nothing; drop writes={writes!r}")
    if writes is not None and writes not in WRITES:
        raise ValueError(f"writes must be one of {', '.join(WRITES)}, not {writes!r}")
    if billing is not None and billing not in BILLINGS:
        raise ValueError(f"billing must be one of {', '.join(BILLINGS)}, not {billing!r}")

    def decorator(fn: Callable[[Actor, ArgsT], OutT]) -> Callable[[Actor, ArgsT], OutT]:
        if name in TOOLS:
            raise ValueError(f"MCP tool {name!r} is registered twice")
        description = inspect.cleandoc(fn.__doc__ or "")
        if not description:
            raise ValueError(f"MCP tool {name!r} needs a docstring: it is the description models read")
        if connector is not None and not name.startswith(f"{connector}_"):
            raise ValueError(f"MCP tool {name!r} belongs to the {connector} connector: name it {connector}_<tool>")
        if description.startswith(ACTION) and (connector is None or scope != "write" or writes not in (None, SHARED)):
            raise ValueError(
                f"MCP tool {name!r}: only a connector's write tool, writing what others read, is an ACTION"
            )
        TOOLS[name] = ToolSpec(
            name=name,
            title=title,
            description=description,
            args=args,
            output=output,
            fn=fn,
            scope=scope,
            feature=feature,
            read_only=is_read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            billing=billing or CALL,
            activity_arg="activity_id" if "activity_id" in args.model_fields else None,
            writes=None if is_read_only else writes or SHARED,
            connector=connector,
        )
        return fn

    return decorator


def visible_tools(*, scopes: frozenset[str], features: set[str]) -> list[ToolSpec]:
    return [spec for spec in TOOLS.values() if is_visible(spec, scopes=scopes, features=features)]


def is_visible(spec: ToolSpec, *, scopes: frozenset[str], features: set[str]) -> bool:
    """A tool is listed when the token has its scope, may make its kind of write, and what it needs
    is on (its feature, its connection, the grant of an ACTION tool)."""
    return (
        spec.scope in scopes
        and (spec.writes != SHARED or may_write(scopes, scope=SHARED))
        and all(need in features for need in spec.needs)
    )


PromptFn = Callable[[Actor, dict[str, str]], str]


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)
    fn: PromptFn


PROMPTS: dict[str, PromptSpec] = {}


def mcp_prompt(
    name: str, *, title: str, arguments: tuple[tuple[str, str, bool], ...] = ()
) -> Callable[[PromptFn], PromptFn]:
    """Register a prompt: a function that gathers memory server-side into one user message."""

    def decorator(fn: PromptFn) -> PromptFn:
        PROMPTS[name] = PromptSpec(name, title, inspect.cleandoc(fn.__doc__ or ""), arguments, fn)
        return fn

    return decorator
