"""Who is acting: passed to every service and selector."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from brain.models import ApiToken, Organisation


@dataclass(frozen=True)
class Actor:
    org: Organisation
    user: User
    scopes: frozenset[str] = frozenset({"read"})
    via: str = "mcp"  # mcp, api, web, admin, command, task
    token: ApiToken | None = None
    role: str = "member"
    client: dict[str, str] = field(default_factory=dict)  # client name/version, session, user agent
    # What the actor may read: "" is its own reach; memory.access narrows an actor whose result
    # others read (``for_every_member``: a shared job's run) and applies the narrowing to every read.
    reads_for: str = ""
    # Restricted categories a connector saves into because its source decides who reads them (a
    # private Slack channel's): the actor reads them as well, only for that save (connectors.sync).
    source_categories: frozenset[int] = frozenset()

    @property
    def can_write(self) -> bool:
        return "write" in self.scopes

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


T = TypeVar("T")
_CALL_MEMO: ContextVar[dict[tuple[Any, ...], Any] | None] = ContextVar("brain_call_memo", default=None)


@contextmanager
def one_call() -> Iterator[None]:
    """Inside it, ``worked_out_once`` keeps what it computes: one tool call works out who the caller
    is (their readable categories) once, however many reads it makes. Outside, nothing is kept."""
    token = _CALL_MEMO.set({})
    try:
        yield
    finally:
        _CALL_MEMO.reset(token)


def worked_out_once(key: tuple[Any, ...], compute: Callable[[], T]) -> T:
    memo = _CALL_MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]
