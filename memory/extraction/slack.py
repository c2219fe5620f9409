"""Reading Slack exports: one document per channel and day, speakers by name.

The public helpers (a user's name, a message's speaker, time and text) are also how the Slack
connector (``connectors.slack``) lays out what it reads, so both read alike in search."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from memory.extraction.parsed import (
    ParsedDocument,
    ParseError,
    SourceFile,
    _attempt,
    _decode,
    _document,
    _Outcome,
    _run,
    turn_paragraph,
)

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
SKIPPED_SUBTYPES = {"channel_join", "channel_leave", "group_join", "group_leave"}
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|([^>]*))?>")
_CHANNEL_LINK = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")
_URL_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")


def _is_slack_export(folder: Path) -> bool:
    if not ((folder / "channels.json").is_file() or (folder / "users.json").is_file()):
        return False
    channels = [child for child in folder.iterdir() if child.is_dir()]
    return any(_DAY.fullmatch(day.stem) for channel in channels for day in channel.glob("*.json"))


def _walk_slack(folder: Path, root: Path) -> Iterator[_Outcome]:
    parser = partial(_parse_slack_day, users=_load_users(folder))
    for channel in sorted(child for child in folder.iterdir() if child.is_dir() and not child.name.startswith(".")):
        for day in sorted(channel.glob("*.json")):
            if _DAY.fullmatch(day.stem):
                yield day, _attempt(partial(_run, day, root, parser))


def _load_users(folder: Path) -> dict[str, str]:
    # Without a readable user list speakers fall back to their ids: worse names, but no lost messages.
    try:
        users = json.loads(_decode((folder / "users.json").read_bytes()))
    except (OSError, ValueError, ParseError):
        return {}
    users = users if isinstance(users, list) else []
    return {user["id"]: user_name(user) for user in users if isinstance(user, dict) and "id" in user}


def user_name(user: dict[str, Any]) -> str:
    profile = user.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    for name in (user.get("real_name"), profile.get("real_name"), profile.get("display_name"), user.get("name")):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return str(user["id"])


def _parse_slack_file(source: SourceFile) -> list[ParsedDocument]:
    # A day file on its own may still sit in an export, two folders up, whose user list names the speakers.
    return _parse_slack_day(source, users=_load_users(source.path.parent.parent))


def _parse_slack_day(source: SourceFile, *, users: dict[str, str]) -> list[ParsedDocument]:
    try:
        messages = json.loads(_decode(source.data))
    except ValueError as exc:
        raise ParseError(f"invalid JSON in {source.rel}: {exc}") from exc
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "ts" in m for m in messages):
        raise ParseError(f"not a Slack export day file: {source.rel}")
    kept = [m for m in messages if m.get("subtype") not in SKIPPED_SUBTYPES]
    said = [(speaker_of(m, users), message_time(m), text) for m in kept if (text := message_text(m, users))]
    if not said:
        return []
    channel, times = source.path.parent.name, [moment for _, moment, _ in said if moment]
    first = times[0] if times else None
    day = source.path.stem if _DAY.fullmatch(source.path.stem) else (first.date().isoformat() if first else "")
    # Times are UTC like every other timestamp here; one turn per paragraph so a chunker can split between turns.
    turns = [turn_paragraph(who, at.strftime("%H:%M") if at else "--:--", text) for who, at, text in said]
    participants = list(dict.fromkeys(who for who, _, _ in said))
    metadata: dict[str, object] = {"channel": channel, "participants": participants, "messages": len(turns)}
    content = "\n\n".join(turns)
    title, external_id = f"#{channel} {day}", f"slack:{channel}:{day}"
    return [
        _document(
            source,
            title,
            content,
            "text/markdown",
            "chat",
            external_id=external_id,
            occurred_at=first,
            metadata=metadata,
            conversation=f"slack:{channel}",
            session=day,
        )
    ]


def message_time(message: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(message["ts"]), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def speaker_of(message: dict[str, Any], users: dict[str, str]) -> str:
    user = message.get("user")
    if isinstance(user, str) and user in users:
        return users[user]
    profile = message.get("user_profile")
    if isinstance(profile, dict) and (name := profile.get("real_name") or profile.get("display_name")):
        return str(name)
    return str(user or message.get("username") or "unknown")


def message_text(message: dict[str, Any], users: dict[str, str]) -> str:
    text = str(message.get("text") or "")
    text = _MENTION.sub(lambda m: f"@{users.get(m.group(1)) or m.group(2) or m.group(1)}", text)
    text = _CHANNEL_LINK.sub(lambda m: f"#{m.group(1)}", text)
    text = html.unescape(_URL_LINK.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(2) else m.group(1), text))
    files = [f"[file: {f['name']}]" for f in message.get("files") or [] if isinstance(f, dict) and f.get("name")]
    # A blank line inside one message would split its speaker turn into two paragraphs.
    return re.sub(r"\n\s*\n+", "\n", " ".join([text.strip(), *files]).strip())
