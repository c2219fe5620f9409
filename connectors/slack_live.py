"""Slack asked live on a person's behalf: the ``slack_*`` tools (``connectors.mcp_tools``).

A caller reaches a channel of a Slack connection when they read, in Brain, the category its
messages land in: the connection's own for a public channel, the channel's own restricted one for
a private channel (whose readers are the channel's members, ``connectors.sync.keep_audience``). A
private channel no sync has described yet is reached by nobody. A channel outside that reach is
answered as unknown, whether it exists or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brain.core.actors import Actor
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied, Unavailable
from connectors.kinds import CredentialsRefused, SourceError
from connectors.models import Connection
from connectors.sealing import CredentialsUnreadable, unseal
from connectors.slack import CHANNEL_ID, CHANNEL_NAME, Channel, Slack, call, post_message
from memory.access import readable_category_ids
from memory.extraction import SKIPPED_SUBTYPES, message_text, message_time, speaker_of


@dataclass(frozen=True)
class Reached:
    connection: Connection
    channel: Channel


def _credentials(connection: Connection) -> dict[str, str]:
    try:
        return unseal(connection.sealed_credentials)
    except CredentialsUnreadable:
        raise Unavailable(
            f"The Slack connection {connection.name!r} has credentials this server cannot read; an admin must paste "
            "its token again on the Connectors page. Carry on without Slack."
        ) from None


def _refused(connection: Connection, exc: SourceError) -> Exception:
    if isinstance(exc, CredentialsRefused):
        return PermissionDenied(f"Slack refused the connection {connection.name!r}: {exc.message}")
    return Unavailable(f"Slack could not answer for the connection {connection.name!r}: {exc.message}")


def reach_of(actor: Actor) -> list[Reached]:
    """The channels the caller reaches, asked of Slack for each of the organisation's connections."""
    readable = set(readable_category_ids(actor=actor))
    reached: list[Reached] = []
    for connection in Connection.objects.filter(org=actor.org, kind="slack").order_by("name"):
        private = dict(connection.audiences.values_list("key", "category_id"))
        if connection.category_id not in readable and not readable & set(private.values()):
            continue  # nothing of it is the caller's to read: Slack is not asked
        source = Slack(credentials=_credentials(connection), options=connection.options)
        try:
            channels = source._channels()
        except SourceError as exc:
            raise _refused(connection, exc) from None
        for channel in channels:
            category = private.get(channel.id) if channel.private else connection.category_id
            if category is not None and category in readable:
                reached.append(Reached(connection, channel))
    return reached


def channel_for(actor: Actor, channel: str, *, granted: str | None = None) -> Reached:
    wanted = channel.strip().lstrip("#")
    if not (CHANNEL_ID.match(wanted) or CHANNEL_NAME.match(wanted.lower())):
        raise InvalidArgument(f"{channel!r} is not a Slack channel; write its name (#general) or its id (C0123ABCD).")
    reach = reach_of(actor)
    matches = [r for r in reach if wanted in (r.channel.id, r.channel.name) or wanted.lower() == r.channel.name]
    if not matches:
        names = ", ".join(f"#{r.channel.name}" for r in reach) or "none"
        raise NotFound(f"No Slack channel {channel!r} that you can read. The ones you can reach are: {names}.")
    if granted is not None:
        allowed = [r for r in matches if granted in r.connection.granted_tools]
        if not allowed:
            raise PermissionDenied(
                f"No admin has granted {granted} on the connection that covers #{matches[0].channel.name}; tell the "
                "user an admin can grant it on the Connectors page."
            )
        matches = allowed
    return matches[0]


def post(actor: Actor, *, tool: str, channel: str, text: str, thread_ts: str) -> tuple[Reached, str]:
    reached = channel_for(actor, channel, granted=tool)
    token = _credentials(reached.connection).get("token", "")
    try:
        ts = post_message(token=token, channel=reached.channel.id, text=text, thread_ts=thread_ts)
    except SourceError as exc:
        raise _refused(reached.connection, exc) from None
    return reached, ts


def read(actor: Actor, *, channel: str, limit: int, thread_ts: str) -> tuple[Reached, list[dict[str, Any]]]:
    """The channel's latest ``limit`` messages (a thread's first ``limit`` when ``thread_ts`` names
    one), oldest first, with who said each and when."""
    reached = channel_for(actor, channel)
    source = Slack(credentials=_credentials(reached.connection), options=reached.connection.options)
    try:
        if thread_ts:
            answer = call(source.client.conversations_replies, channel=reached.channel.id, ts=thread_ts, limit=limit)
        else:
            answer = call(source.client.conversations_history, channel=reached.channel.id, limit=limit)
        messages = [m for m in answer.get("messages", []) if isinstance(m, dict) and m.get("ts")][:limit]
        for message in messages:
            source._know(message.get("user"))
    except SourceError as exc:
        if "thread_not_found" in exc.message:
            raise NotFound(f"#{reached.channel.name} has no thread {thread_ts}.") from None
        raise _refused(reached.connection, exc) from None
    said = []
    for message in sorted(messages, key=lambda m: float(m["ts"])):
        if message.get("subtype") in SKIPPED_SUBTYPES or not (text := message_text(message, source._names)):
            continue
        at = message_time(message)
        said.append(
            {
                "who": speaker_of(message, source._names),
                "at": at.isoformat() if at else "",
                "text": text,
                "ts": str(message["ts"]),
                "replies": int(message.get("reply_count") or 0),
            }
        )
    return reached, said
