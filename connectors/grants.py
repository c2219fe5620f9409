"""What a connection adds to an organisation's tools, and the grants of its ACTION tools.

A connector's tools (``<kind>_<tool>``, in ``connectors.mcp_tools``) appear to an organisation's
assistants only while it has a connection of that kind. Tools that change the source (their
description starts with ``ACTION:``) are off until an admin grants each one on a connection, and
then run only through that connection. Both are kept on the organisation's features
(``brain.core.services.set_connected_tools``), so deciding whether a tool is offered reads no more
than it did before connectors existed.
"""

from __future__ import annotations

from django.db import transaction

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument
from brain.core.services import set_connected_tools
from brain.models import Organisation
from connectors.kinds import actions_of
from connectors.models import Connection
from connectors.selectors import own_connection


def refresh_connected_tools(org: Organisation) -> None:
    """Work out again what the organisation's connections add to its tools."""
    markers: set[str] = set()
    for kind, granted in Connection.objects.filter(org=org).values_list("kind", "granted_tools"):
        markers.add(f"connector:{kind}")
        markers.update(f"grant:{name}" for name in granted if name in actions_of(kind))
    set_connected_tools(org=org, markers=markers)


@transaction.atomic
def grant_tool(*, actor: Actor, connection_id: int, tool: str, granted: bool) -> Connection:
    """Grant or withdraw one ACTION tool on one connection; admins only."""
    connection = own_connection(actor, connection_id)
    offered = actions_of(connection.kind)
    if tool not in offered:
        raise InvalidArgument(
            f"{tool!r} is not an action of a {connection.kind} connection; the ones to grant are "
            f"{', '.join(offered) or 'none'}."
        )
    chosen = set(connection.granted_tools)
    if (tool in chosen) == granted:
        return connection
    connection.granted_tools = sorted(chosen | {tool} if granted else chosen - {tool})
    connection.save(update_fields=["granted_tools"])
    record_audit(
        actor=actor,
        action="connection.tool_granted" if granted else "connection.tool_withdrawn",
        target=f"connection {connection.name}",
        details={"tool": tool},
    )
    refresh_connected_tools(connection.org)
    return connection
