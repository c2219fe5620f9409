"""Run one registered tool for an actor: validate, call, record. Shared by MCP and REST."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from brain.actors import Actor
from brain.errors import DomainError
from brain.inputs import refuse_unstorable
from brain.mcp.limits import describe_validation_error
from brain.mcp.registry import ToolOutput, ToolSpec
from brain.models import ToolCall
from brain.services import record_tool_call

logger = logging.getLogger("brain.calls")

GENERIC_FAILURE = (
    "Brain hit an unexpected error while running {tool}. It has been logged. Carry on without this "
    "result, or try once more later; do not retry in a loop."
)


@dataclass(frozen=True)
class Outcome:
    output: ToolOutput | None
    message: str = ""
    code: str = ""
    status: int = 200


def execute(actor: Actor, spec: ToolSpec, arguments: dict[str, Any]) -> Outcome:
    """Never raises: every failure becomes an Outcome with a message a model can act on.

    Arguments Brain cannot store (NUL, unpaired surrogates, JSON nested too deep; see
    ``brain.inputs``) are refused here, before validation, for MCP and REST alike."""
    started = time.perf_counter()
    outcome = Outcome(output=None, message=GENERIC_FAILURE.format(tool=spec.name), code="internal", status=500)
    try:
        refuse_unstorable(arguments, what=spec.name)
        args = spec.args.model_validate(arguments)
        outcome = Outcome(output=spec.fn(actor, args))
    except ValidationError as exc:
        outcome = Outcome(None, describe_validation_error(spec.name, exc), "invalid_argument", 400)
    except DomainError as exc:
        outcome = Outcome(None, exc.message, exc.code, exc.status)
    except Exception:
        logger.exception("tool %s failed", spec.name)
    finally:
        _record(actor, spec, arguments, outcome, time.perf_counter() - started)
    return outcome


def _record(actor: Actor, spec: ToolSpec, arguments: dict[str, Any], outcome: Outcome, seconds: float) -> None:
    activity_id = getattr(outcome.output, "activity_id", None)
    if activity_id is None and spec.activity_arg:
        activity_id = arguments.get(spec.activity_arg)
    if outcome.output is not None:
        result = ToolCall.OK
    elif outcome.code == "internal":
        result = ToolCall.ERROR
    elif outcome.code == "permission_denied":
        result = ToolCall.DENIED
    else:
        result = ToolCall.REFUSED
    try:
        record_tool_call(
            actor=actor,
            tool=spec.name,
            duration_ms=round(seconds * 1000, 2),
            outcome=result,
            error_code=outcome.code,
            activity_id=activity_id if isinstance(activity_id, str) else None,
        )
    except Exception:  # a lost call record must not turn a good answer into an error
        logger.exception("could not record the call to %s", spec.name)
