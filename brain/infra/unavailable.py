"""What every interface answers when Brain's own database stops answering (a restart, a failover,
the network): one rule for REST, the MCP transport and tool runs.

It is not the caller's fault and trying again can succeed, so it is ``unavailable``, 503 and
retryable. The failure may come after a write committed (the database went away while the answer
was being written or the call recorded): an answer to a write never claims that nothing happened.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

from brain.core.errors import Unavailable

DATABASE_ERRORS = (OperationalError, InterfaceError)
MAY_HAVE_SAVED = " What was sent may have been saved before it stopped: check before sending it again."


def database_away(exc: BaseException) -> bool:
    """Whether ``exc`` is Brain's database not answering (connection refused or lost, a restart)."""
    return isinstance(exc, DATABASE_ERRORS)


def database_unavailable(*, what: str, writes: bool) -> Unavailable:
    """The refusal for ``what`` (a tool, a request) when the database is away; ``writes`` for a
    call that may have written."""
    message = f"{what} could not finish: Brain's database is not answering (it may be restarting). Try again shortly."
    return Unavailable(message + (MAY_HAVE_SAVED if writes else ""), may_have_saved=writes)


def internal_failure(*, what: str, writes: bool) -> str:
    """The message of an unexpected failure, which is logged; nothing of its internals is shown."""
    message = f"{what} failed unexpectedly; the error has been logged."
    return message + (MAY_HAVE_SAVED if writes else "")
