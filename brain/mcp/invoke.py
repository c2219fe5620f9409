"""Run one registered tool for an actor: authorise, validate, call, record. Shared by MCP and REST.

Every rule about running a tool lives here, so the interfaces only translate the ``Outcome``."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from brain.actors import Actor, one_call
from brain.errors import DomainError, Outage, PermissionDenied, Unavailable
from brain.inputs import refuse_unstorable
from brain.mcp.limits import describe_validation_error
from brain.mcp.registry import ToolOutput, ToolSpec, is_visible
from brain.models import ToolCall
from brain.personal import SHARED, require_may_write
from brain.replicas import mark_written, run_read
from brain.selectors import enabled_features
from brain.services import record_tool_call
from brain.unavailable import DATABASE_ERRORS, MAY_HAVE_SAVED, database_unavailable
from usage.metering import Charge, charge, refund
from usage.prices import of_call

logger = logging.getLogger("brain.calls")

GENERIC_FAILURE = (
    "Brain hit an unexpected error while running {tool}. It has been logged. Carry on without this "
    "result, or try once more later; do not retry in a loop."
)
OUTAGE = (
    "{tool} could not run: Brain cannot reach {dependency} right now. Try again in a few minutes; if "
    "it still fails, carry on without this result and tell the user Brain's model is unavailable."
)


@dataclass(frozen=True)
class Outcome:
    output: ToolOutput | None
    message: str = ""
    code: str = ""
    status: int = 200
    details: dict[str, Any] = field(default_factory=dict)
    retryable: bool = False

    @classmethod
    def refused(cls, exc: DomainError) -> Outcome:
        return cls(None, exc.message, exc.code, exc.status, dict(exc.details), exc.retryable)


def authorise(actor: Actor, spec: ToolSpec) -> None:
    """Raise ``PermissionDenied`` unless the actor may see ``spec``: its scope, what it writes
    (``brain.personal``: a connection limited to personal memories never runs a tool that writes
    what others read), and its feature if any."""
    features = enabled_features(actor=actor) if spec.feature else set()
    if is_visible(spec, scopes=actor.scopes, features=features):
        return
    if spec.scope not in actor.scopes:
        raise PermissionDenied(
            f"{spec.name} changes Brain and this token is read-only. Ask the user for a token with the "
            "write scope, or carry on without writing.",
            scope=spec.scope,
        )
    if spec.writes == SHARED:
        require_may_write(actor, scope=SHARED, what=spec.name)
    raise PermissionDenied(
        f"{spec.name} is switched off for this organisation; an admin can turn it on.", feature=spec.feature
    )


def execute(actor: Actor, spec: ToolSpec, arguments: dict[str, Any]) -> Outcome:
    """Never raises: every failure becomes an Outcome with a message a model can act on.

    A tool the actor may not see is refused first (``authorise``). Arguments Brain cannot store
    (NUL, unpaired surrogates, JSON nested too deep; see ``brain.inputs``) are refused before
    validation. A model Brain needs that does not answer (an ``Outage``) is ``unavailable`` and
    retryable, not an unexpected error. All of it for MCP and REST alike.

    With a replica configured, only the tool itself may read from it (``brain.replicas``): the
    authorisation, the charge and the call record stay on the primary."""
    started = time.perf_counter()
    failure = GENERIC_FAILURE.format(tool=spec.name) + ("" if spec.read_only else MAY_HAVE_SAVED)
    outcome = Outcome(output=None, message=failure, code="internal", status=500)
    spent: Charge | None = None
    try:
        authorise(actor, spec)
        refuse_unstorable(arguments, what=spec.name)
        args = spec.args.model_validate(arguments)
        spent = _charge(actor, spec)
        with one_call():
            if spec.read_only:
                outcome = Outcome(output=run_read(actor, spec.name, lambda: spec.fn(actor, args)))
            else:
                outcome = Outcome(output=spec.fn(actor, args))
                mark_written(actor)
    except ValidationError as exc:
        outcome = Outcome(None, describe_validation_error(spec.name, exc), "invalid_argument", 400)
    except DomainError as exc:
        outcome = Outcome.refused(exc)
    except Outage as exc:
        logger.warning("tool %s: %s unavailable: %s", spec.name, exc.dependency, exc)
        outcome = Outcome.refused(Unavailable(OUTAGE.format(tool=spec.name, dependency=exc.dependency)))
    except DATABASE_ERRORS as exc:
        logger.warning("tool %s: the database is not answering: %s", spec.name, exc)
        if outcome.output is None:  # a tool that has its answer succeeded, whatever failed after it
            outcome = Outcome.refused(database_unavailable(what=spec.name, writes=not spec.read_only))
    except Exception:
        logger.exception("tool %s failed", spec.name)
    finally:
        if spent is not None and outcome.output is None:
            spent = _refund(spent)
        _record(actor, spec, arguments, outcome, time.perf_counter() - started, spent)
    return outcome


def _charge(actor: Actor, spec: ToolSpec) -> Charge | None:
    """Pay for the call before it runs (``OutOfCredits`` refuses it); free tools take nothing."""
    price = of_call(spec.billing)
    return None if price is None else charge(org=actor.org, price=price, what=spec.name)


def _refund(spent: Charge) -> Charge | None:
    """A call that did not succeed is not paid for; answers what stays charged (None, unless the
    refund itself failed)."""
    try:
        refund(spent)
    except Exception:
        logger.exception("could not give back the charge of a failed call: %s", spent)
        return spent
    return None


def _record(
    actor: Actor, spec: ToolSpec, arguments: dict[str, Any], outcome: Outcome, seconds: float, spent: Charge | None
) -> None:
    activity_id = getattr(outcome.output, "activity_id", None)
    if activity_id is None and spec.activity_arg:
        activity_id = arguments.get(spec.activity_arg)
    if outcome.output is not None:
        result = ToolCall.OK
    elif outcome.code in ("internal", Unavailable.code):  # an outage is still a failed call
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
            credits=spent.credits if spent is not None else 0,
        )
    except Exception:  # a lost call record must not turn a good answer into an error
        logger.exception("could not record the call to %s", spec.name)
