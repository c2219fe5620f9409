"""Which stage of an MCP call a stack belongs to, for ``bench.profile``.

A stack is a list of (file, function) pairs, outermost first, as py-spy records them or as
``sys._getframe`` walks them. Three passes decide:

1. the outermost frame that is a stage of its own (``authenticate_token``, ``record_call``,
   ``run_read`` ...) names the stage: everything it calls belongs to it, the ORM and psycopg
   included;
2. else the innermost of Brain's frames that only hold other stages (``run_tool``,
   ``execute``, the worker-thread wrapper, the token verifier) names what it does itself;
3. else a frame of the memory's own code (``memory/``, ``registers/`` ...) is the tool, run in a
   thread of its own (the search's arms run side by side);
4. else the innermost library frame: the MCP SDK, Starlette, uvicorn and asyncio are framing,
   asgiref and the thread pool are thread hops.

A thread that only waits for work (the event loop in ``select``, an idle pool thread) is
``idle`` and left out of the shares.
"""

from __future__ import annotations

from collections.abc import Sequence

TOKEN, ACTOR, AUTHORISE, CHARGE, RECORD = "token", "actor", "authorise", "charge", "record"
TOOL, SERIALISE, FRAMING, HOPS, OTHER, IDLE = "tool", "serialise", "framing", "thread hops", "other", "idle"
STAGES = [TOKEN, ACTOR, AUTHORISE, CHARGE, RECORD, TOOL, SERIALISE, FRAMING, HOPS, OTHER]

Frame = tuple[str, str]  # (file path, function name)

# (file ending, function name or "*", the function that must call it or "") -> stage
OWN_STAGE: list[tuple[str, str, str, str]] = [
    ("brain/core/services.py", "authenticate_token", "", TOKEN),
    ("brain/core/services.py", "mark_used", "", TOKEN),
    ("brain/oauth/connections.py", "connection_for_access_token", "", TOKEN),
    ("brain/core/services.py", "actor_for_token", "", ACTOR),
    ("brain/core/selectors.py", "enabled_features", "_verify", ACTOR),
    ("brain/mcp/auth.py", "current_caller", "", ACTOR),
    ("brain/mcp/server.py", "_client_info", "", ACTOR),
    ("brain/mcp/invoke.py", "authorise", "", AUTHORISE),
    ("brain/core/inputs.py", "refuse_unstorable", "", AUTHORISE),
    ("pydantic/main.py", "model_validate", "execute", AUTHORISE),  # the tool's arguments
    ("brain/mcp/meter.py", "metered", "", CHARGE),
    ("brain/mcp/meter.py", "_charge", "", CHARGE),
    ("brain/mcp/meter.py", "give_back", "", CHARGE),
    ("usage/metering.py", "*", "", CHARGE),
    ("brain/mcp/meter.py", "record_call", "", RECORD),
    ("brain/core/services.py", "record_tool_call", "", RECORD),
    ("brain/mcp/invoke.py", "_audit_action", "", RECORD),
    ("brain/infra/replicas.py", "run_read", "", TOOL),
    ("brain/core/actors.py", "one_call", "", TOOL),
    ("brain/mcp/registry.py", "to_text", "", SERIALISE),
    ("pydantic/main.py", "model_dump", "", SERIALISE),
    ("pydantic/main.py", "model_dump_json", "", SERIALISE),
    ("json/__init__.py", "dumps", "", SERIALISE),
    ("django/db/__init__.py", "close_old_connections", "", HOPS),  # once per hop, each side
]

# Brain frames that hold other stages: what they do themselves.
CONTAINERS: list[tuple[str, str, str]] = [
    ("brain/mcp/server.py", "run_tool", SERIALISE),  # the output as text and as structured content
    ("brain/mcp/server.py", "call_tool", ACTOR),  # the actor with the client's name
    ("brain/mcp/server.py", "wrapped", HOPS),
    ("brain/mcp/auth.py", "_verify", ACTOR),  # the SDK's access token around the actor
    ("brain/mcp/auth.py", "verify_token", HOPS),
    ("brain/mcp/invoke.py", "execute", OTHER),
    ("brain/mcp/gateway.py", "*", FRAMING),
    ("brain/mcp/sessions.py", "*", FRAMING),
    ("bench/statements.py", "*", OTHER),
]

LIBRARIES: list[tuple[str, str]] = [
    ("asgiref/", HOPS),
    ("concurrent/futures/", HOPS),
    ("mcp/", FRAMING),
    ("mcp_types/", FRAMING),
    ("starlette/", FRAMING),
    ("uvicorn/", FRAMING),
    ("anyio/", FRAMING),
    ("httptools/", FRAMING),
    ("h11/", FRAMING),
    ("asyncio/", FRAMING),
]

TOOL_PACKAGES = ("memory", "registers", "contacts", "jobs", "connectors", "skills")
WAITING = ("select", "wait", "get", "acquire", "_worker", "sleep", "poll")


def _name(function: str) -> str:
    """``Class.method`` and ``outer.<locals>.inner`` as py-spy and ``__qualname__`` write them: the last part."""
    return function.rsplit(".", 1)[-1]


def _is(frame: Frame, ending: str, function: str) -> bool:
    path = frame[0].replace("\\", "/")
    return path.endswith(ending) and (function == "*" or _name(frame[1]) == function)


def _brain(frame: Frame) -> bool:
    path = frame[0].replace("\\", "/")
    return "site-packages" not in path and any(
        f"{part}/" in path for part in ("brain", "usage", "memory", "registers", "skills", "contacts", "jobs")
    )


def _tool_code(frame: Frame) -> bool:
    path = frame[0].replace("\\", "/")
    return "site-packages" not in path and any(f"{part}/" in path for part in TOOL_PACKAGES)


def classify(stack: Sequence[Frame]) -> str:
    """The stage of one stack, outermost frame first."""
    for index, frame in enumerate(stack):
        caller = _name(stack[index - 1][1]) if index else ""
        for ending, function, called_from, stage in OWN_STAGE:
            if _is(frame, ending, function) and (not called_from or caller == called_from):
                return stage
    for frame in reversed(stack):
        for ending, function, stage in CONTAINERS:
            if _is(frame, ending, function):
                return stage
    if any(_tool_code(frame) for frame in stack):
        return TOOL
    if stack and _name(stack[-1][1]) in WAITING and not any(_brain(f) for f in stack):
        return IDLE
    for frame in reversed(stack):
        path = frame[0].replace("\\", "/")
        for part, stage in LIBRARIES:
            if f"/{part}" in path or path.startswith(part):
                return stage
    return OTHER


def in_database(stack: Sequence[Frame]) -> bool:
    """Whether the stack is inside the database driver: sending a statement or waiting for its answer."""
    return any("/psycopg/" in frame[0].replace("\\", "/") or frame[0].startswith("psycopg/") for frame in stack)


def parse_collapsed(line: str) -> tuple[list[Frame], int] | None:
    """One line of py-spy's raw (collapsed) output: ``frame;frame;... count``, each frame
    ``function (file:line)``, the first a ``thread (...)`` when recorded with ``--threads``."""
    stack_text, _, count = line.rstrip("\n").rpartition(" ")
    if not stack_text or not count.isdigit():
        return None
    frames: list[Frame] = []
    for part in stack_text.split(";"):
        if part.startswith("thread (") or part.startswith("process "):
            continue
        function, _, where = part.partition(" (")
        frames.append((where.rstrip(")").rsplit(":", 1)[0], function))
    return frames, int(count)
