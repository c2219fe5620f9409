"""The meter every call goes through: its price (``brain.mcp.prices``) paid before the work runs,
given back when the work does not succeed, and the call recorded. Tools run by ``execute`` (MCP,
REST, pages, jobs), prompts, the REST endpoints that are not tools and the pages that read memory
themselves all come here, so there is one way to charge and one mapping of outcomes.

The accounts live in the usage app, which plugs its ``charge``, ``refund`` and ``can_pay`` into
``BILLER`` when it is ready (``usage.metering``); with nothing plugged, work is recorded and costs
nothing. The parts of Brain that ask whether an organisation may pay before starting work (the
ingestion that waits for credits, a job's run) ask here (``can_pay``, ``refuse_unless_payable``), and
what waits is told when the organisation may pay again through ``PAYABLE_AGAIN``; none of them
imports the usage app.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date

from brain.core.actors import Actor
from brain.core.errors import DomainError, Outage, Unavailable
from brain.core.services import record_tool_call
from brain.infra.hooks import Seam
from brain.infra.logs import bound
from brain.infra.metrics import count_call
from brain.mcp.prices import READ, Price
from brain.models import Organisation, ToolCall

logger = logging.getLogger("brain.calls")


class OutOfCredits(DomainError):
    code, status = "out_of_credits", 402


@dataclass(frozen=True)
class Charge:
    """What one charge took, so that exactly that can be given back."""

    org_id: int
    month: date
    price: Price
    free: int = 0
    credits: int = 0


@dataclass(frozen=True)
class Biller:
    """``charge`` takes a price or raises ``OutOfCredits``; ``refund`` gives back exactly one charge;
    ``can_pay`` says whether a charge would succeed now; ``refusal`` is the error a piece of work
    that cannot be paid for is refused with."""

    charge: Callable[..., Charge]  # (*, org: Organisation, price: Price, what: str) -> Charge
    refund: Callable[[Charge], None]
    can_pay: Callable[[Organisation, Price], bool]
    refusal: Callable[..., OutOfCredits]  # (org: Organisation, *, what: str, price: Price) -> OutOfCredits


BILLER: Seam[Biller] = Seam(
    "biller", "charges a price to an organisation, refunds one charge and says whether one could be paid"
)
# What waits while an organisation cannot pay, told when it may pay again (memory plugs in the
# documents whose ingestion waits). The billing app calls it after credits are added or the plan
# changes.
PAYABLE_AGAIN: Seam[Callable[[Organisation], object]] = Seam(
    "payable again", "called with an organisation that may pay again (credits added, plan changed)"
)


def can_pay(org: Organisation, price: Price = READ) -> bool:
    """Whether ``price`` could be charged to ``org`` now (always, with no biller plugged). Advisory:
    another caller may take the credits first; the charge itself is what counts."""
    return all(biller.can_pay(org, price) for biller in BILLER)


def refuse_unless_payable(org: Organisation, *, what: str, price: Price = READ) -> None:
    """Raise ``OutOfCredits`` (the words a refused call gets) when ``price`` cannot be paid now.

    For work that makes metered calls later and should not start at all without credits (a job's
    run); each of its calls is still charged by ``metered``. Advisory, like ``can_pay``."""
    for biller in BILLER:
        if not biller.can_pay(org, price):
            raise biller.refusal(org, what=what, price=price)


def payable_again(org: Organisation) -> None:
    """Tell what waits for ``org``'s credits that it may pay again."""
    for resume in PAYABLE_AGAIN:
        resume(org)


def _charge(org: Organisation, price: Price, what: str) -> Charge | None:
    for biller in BILLER:
        return biller.charge(org=org, price=price, what=what)
    return None


class Meter:
    """One metered piece of work: what it took, and giving that back at most once."""

    def __init__(self, spent: Charge | None) -> None:
        self.spent = spent

    @property
    def credits(self) -> int:
        """The credits the work costs as things stand (for its call record)."""
        return self.spent.credits if self.spent is not None else 0

    def give_back(self) -> None:
        """The work did not succeed: refund it. A refund that fails is logged and stays charged."""
        if self.spent is None:
            return
        try:
            for biller in BILLER:
                biller.refund(self.spent)
        except Exception:
            logger.exception("could not give back the charge of a failed call: %s", self.spent)
            return
        self.spent = None


@contextmanager
def metered(actor: Actor, what: str, price: Price | None) -> Iterator[Meter]:
    """Pay ``price`` for ``what`` before it runs, or raise ``OutOfCredits`` having taken nothing.

    The work runs inside the block; an exception out of it gives the charge back. Work that
    fails without raising (a REST answer of 4xx) calls ``give_back`` itself. A free piece of work
    (``price`` None) takes nothing and cannot be refused."""
    meter = Meter(None if price is None else _charge(actor.org, price, what))
    try:
        yield meter
    except BaseException:
        meter.give_back()
        raise


class Call:
    """One call being timed, charged and recorded (``recorded_call``): the caller pays through
    ``paying`` and says how the call ended by setting ``code`` (empty when it succeeded), or
    ``status`` for a REST endpoint that is not a tool (its code follows from it), and
    ``activity_id`` when it has one."""

    def __init__(self) -> None:
        self.meter: Meter | None = None
        self.code = "internal"  # until the call says how it ended
        self.status: int | None = None
        self.activity_id: str | None = None

    @contextmanager
    def paying(self, actor: Actor | None, what: str, price: Price | None) -> Iterator[Meter]:
        """``metered`` for this call (nothing is charged without an actor)."""
        paid: AbstractContextManager[Meter] = nullcontext(Meter(None)) if actor is None else metered(actor, what, price)
        with paid as meter:
            self.meter = meter
            yield meter

    @property
    def credits(self) -> int:
        return self.meter.credits if self.meter is not None else 0


@contextmanager
def recorded_call(actor: Actor | None, name: str) -> Iterator[Call]:
    """Time a call and record it as ``name`` when it ends, however it ends: the one wrapper of the
    calls of tools (MCP, REST, pages, jobs), prompts, REST endpoints and pages. A refusal or an
    outage raised through it is recorded with its code and goes on; without an actor nothing is
    recorded."""
    started = time.perf_counter()
    call = Call()
    try:
        with bound(org=actor.org.slug if actor is not None else None):
            yield call
    except DomainError as exc:
        call.code = exc.code
        raise
    except Outage:
        call.code = Unavailable.code
        raise
    finally:
        if actor is not None:
            # A REST endpoint's outcome is its status, and its code the status unless it succeeded.
            code = call.code if call.status is None else "" if call.status < 400 else str(call.status)
            seconds = time.perf_counter() - started
            record_call(
                actor, name, code, seconds, credits=call.credits, activity_id=call.activity_id, status=call.status
            )


def record_call(
    actor: Actor,
    name: str,
    code: str,
    seconds: float,
    *,
    credits: int = 0,
    activity_id: str | None = None,
    status: int | None = None,
) -> None:
    """One call record: ok when ``code`` is empty, else its outcome from the refusal's code; for a
    REST endpoint that is not a tool, from the answer's ``status`` (its code is the status)."""
    result = outcome_of(code, status)
    count_call(tool=name, outcome=result, code=code, seconds=seconds, credits=credits)
    try:
        record_tool_call(
            actor=actor,
            tool=name,
            duration_ms=round(seconds * 1000, 2),
            outcome=result,
            error_code=code,
            activity_id=activity_id,
            credits=credits,
        )
    except Exception:  # a lost call record must not turn a good answer into an error
        logger.exception("could not record the call to %s", name)


def outcome_of(code: str, status: int | None = None) -> str:
    """A call's recorded outcome: ok, denied, refused, or error (an outage is still a failed call)."""
    if status is not None:
        failed, denied, broken = status >= 400, status in (401, 403), status >= 500
    else:
        failed, denied, broken = bool(code), code == "permission_denied", code in ("internal", Unavailable.code)
    if not failed:
        return ToolCall.OK
    if broken:
        return ToolCall.ERROR
    return ToolCall.DENIED if denied else ToolCall.REFUSED
