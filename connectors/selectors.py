"""Reads of an organisation's connections that its admins manage."""

from __future__ import annotations

from brain.core.actors import Actor
from brain.core.errors import NotFound, PermissionDenied
from connectors.models import Connection


def require_admin(actor: Actor) -> None:
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation may manage its connections.")


def own_connection(actor: Actor, connection_id: int) -> Connection:
    """The organisation's connection, locked for a change; admins only."""
    require_admin(actor)
    connection = Connection.objects.select_for_update().filter(org=actor.org, pk=connection_id).first()
    if connection is None:
        raise NotFound("No such connection.")
    return connection
