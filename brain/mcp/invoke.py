"""Run one registered tool for an actor: authorise, validate, call, record. Shared by MCP and REST.

Every rule about running a tool lives here, so the interfaces only translate the ``Outcome``."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from brain.core.actors import Actor, one_call
from brain.core.audit import record_audit, shown
from brain.core.errors import DomainError, Outage, PermissionDenied, Unavailable
from brain.core.inputs import refuse_unstorable
from brain.core.personal import SHARED, require_may_write
from brain.core.selectors import enabled_features
from brain.infra.replicas import mark_written, run_read
from brain.infra.unavailable import DATABASE_ERRORS, MAY_HAVE_SAVED, database_unavailable
from brain.mcp.limits import describe_validation_error
from brain.mcp.meter import recorded_call
from brain.mcp.prices import PROMPT, of_call
from brain.mcp.registry import PromptSpec, ToolOutput, ToolSpec, is_visible

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
    (``brain.core.personal``: a connection limited to personal memories never runs a tool that writes
    what others read), and its feature if any."""
    features = enabled_features(actor=actor) if spec.needs else set()
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
    if spec.connector and f"connector:{spec.connector}" not in features:
        raise PermissionDenied(
            f"{spec.name} needs a {spec.connector} connection, and this organisation has none; an admin can add "
            "one on the Connectors page.",
            connector=spec.connector,
        )
    if spec.action and f"grant:{spec.name}" not in features:
        raise PermissionDenied(
            f"{spec.name} changes something outside Brain and no admin has granted it to assistants here; an admin "
            "can grant it on the Connectors page. Tell the user rather than retrying.",
            grant=spec.name,
        )
    raise PermissionDenied(
        f"{spec.name} is switched off for this organisation; an admin can turn it on.", feature=spec.feature
    )


def execute(actor: Actor, spec: ToolSpec, arguments: dict[str, Any]) -> Outcome:
    """Never raises: every failure becomes an Outcome with a message a model can act on.

    A tool the actor may not see is refused first (``authorise``). Arguments Brain cannot store
    (NUL, unpaired surrogates, JSON nested too deep; see ``brain.core.inputs``) are refused before
    validation. A model Brain needs that does not answer (an ``Outage``) is ``unavailable`` and
    retryable, not an unexpected error. All of it for MCP and REST alike. The call is paid for as
    ``brain.mcp.meter.recorded_call`` says, and given back when it does not succeed.

    With a replica configured, only the tool itself may read from it (``brain.infra.replicas``): the
    authorisation, the charge and the call record stay on the primary."""
    failure = GENERIC_FAILURE.format(tool=spec.name) + ("" if spec.read_only else MAY_HAVE_SAVED)
    outcome = Outcome(output=None, message=failure, code="internal", status=500)
    authorised = False
    with recorded_call(actor, spec.name) as call:
        try:
            authorise(actor, spec)
            refuse_unstorable(arguments, what=spec.name)
            authorised = True  # and its arguments can be kept in an audit record
            args = spec.args.model_validate(arguments)
            with call.paying(actor, spec.name, of_call(spec.billing)), one_call():
                if spec.read_only:
                    output = run_read(actor, spec.name, lambda: spec.fn(actor, args))
                else:
                    output = spec.fn(actor, args)
            outcome = Outcome(output=output)  # done and paid for: what follows cannot take it back
            if not spec.read_only:
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
            call.code = outcome.code if outcome.output is None else ""
            activity_id = getattr(outcome.output, "activity_id", None)
            if activity_id is None and spec.activity_arg:
                activity_id = arguments.get(spec.activity_arg)
            call.activity_id = activity_id if isinstance(activity_id, str) else None
            if spec.action and authorised:
                _audit_action(actor, spec, arguments, outcome)
    return outcome


def _audit_action(actor: Actor, spec: ToolSpec, arguments: dict[str, Any], outcome: Outcome) -> None:
    """Every call of an ACTION tool that got past authorisation is in the audit log, done or not
    (arguments Brain cannot store are refused before, and leave their call record only)."""
    try:
        details = {key: shown(value) for key, value in arguments.items()}
        record_audit(
            actor=actor,
            action="tool.action",
            target=spec.name,
            details={"arguments": details, "outcome": outcome.code or "done"},
        )
    except DATABASE_ERRORS as exc:
        logger.warning("tool %s: its audit record could not be written: %s", spec.name, exc)


def run_prompt(actor: Actor, spec: PromptSpec, arguments: dict[str, str]) -> str:
    """The prompt's text for the actor: paid for as a read and recorded like a tool call
    (``prompt:<name>``), given back when it fails. Raises ``DomainError`` for a refusal (out of
    credits, arguments Brain cannot store) and lets an unexpected error through, for the
    interface to answer."""
    what = f"the prompt {spec.name}"
    with recorded_call(actor, f"prompt:{spec.name}") as call:
        refuse_unstorable(arguments, what=what)
        with call.paying(actor, what, PROMPT), one_call():
            text = run_read(actor, what, lambda: spec.fn(actor, arguments))
        call.code = ""
        return text
