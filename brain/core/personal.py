"""The "Personal memories only" rule, written once.

A token with that access (scopes read, write and personal) exists so that an assistant a person
uses privately may keep things for that person and never change what anyone else in the
organisation reads. Every write that others can read asks this module:

- a tool declares what it writes (``brain.mcp.registry.mcp_tool(writes=...)``); one that writes
  what others read (``SHARED``, the default for a write tool that declares nothing) is hidden
  from and refused to such a connection before it runs (``brain.mcp.invoke.authorise``);
- a service that takes a scope (documents, remembered memories, forget, jobs) or writes a shared
  register calls ``require_may_write`` with the scope of what it is about to write, so no other
  way in (REST, a job's run, a future tool) can bypass it.
"""

from __future__ import annotations

from collections.abc import Collection

from brain.core.actors import Actor
from brain.core.errors import PermissionDenied

PERSONAL_ONLY = "personal"  # the token scope that limits writing to the owner's personal memory
SHARED, PERSONAL = "shared", "personal"  # what a write reaches: everyone it is shared with, or its owner


def is_personal_only(scopes: Collection[str]) -> bool:
    return PERSONAL_ONLY in scopes


def may_write(scopes: Collection[str], *, scope: str) -> bool:
    """Whether a connection with ``scopes`` may write something with this audience.

    Anything but ``PERSONAL`` (shared memory, an organisation's job, a register, another person's
    inbox) counts as shared, so an audience nobody thought of is refused, not allowed."""
    return scope == PERSONAL or not is_personal_only(scopes)


def require_may_write(actor: Actor, *, scope: str, what: str) -> None:
    """Raise ``PermissionDenied`` unless ``actor`` may write ``what`` with the audience ``scope``.

    ``what`` names the write for the message ("record_commitment", "A shared job")."""
    if not may_write(actor.scopes, scope=scope):
        raise PermissionDenied(
            f"{what} would change what other people in the organisation read, and this connection may only store "
            "personal memories. Keep it in the user's personal memory instead (remember with scope personal), or "
            "ask the user for a token with read and write access.",
            access="personal memories only",
        )


def default_scope(actor: Actor) -> str:
    """Where a write that names no scope goes: the owner's personal memory on a personal-only connection."""
    return PERSONAL if is_personal_only(actor.scopes) else SHARED
