"""Who is acting: passed to every service and selector."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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

    @property
    def can_write(self) -> bool:
        return "write" in self.scopes

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"
