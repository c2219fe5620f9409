"""Slack: the messages of chosen channels, over Slack's Web API with Slack's own client
(``slack_sdk``), at ``BRAIN_SLACK_API_URL`` (by default https://slack.com/api).

One document per thread (its first message with every reply) and, for messages nobody replied to,
one per channel and day, laid out like an imported Slack export (``memory.extraction.slack``): one
turn a paragraph, "**Name** (time): text". A thread is one conversation, so it is read, found and
superseded as one; a day of a channel's loose messages is how people look them up ("what was said
in #ops on Tuesday") and keeps a busy channel from becoming thousands of one-line documents.

The cursor keeps, per channel, the newest message read and, in the middle of a listing, Slack's
``next_cursor`` with the loose messages of the day the page ended in (carried until that day is
complete), so a sync stopped between pages goes on from there. Each sync reads the last
``RECHECK_DAYS`` days again: an edit there becomes a new version, a new reply a new version of its
thread, a thread or day with nothing left is withdrawn. Older changes arrive through the Events API
webhook (``connectors.hooks.slack_hook``), which asks the next sync to read that thread or day again
(``rechecks``) and withdraws at once what a deleted message belonged to.

A private channel's items name its ``Audience``: the channel's members, by their profile email, so
``connectors.sync`` saves them into a restricted category only those of them in Brain read.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from connectors.kinds import Audience, CredentialsRefused, Item, Kind, Page, SourceError, reach_failure, register
from memory.extraction import SKIPPED_SUBTYPES, message_text, message_time, speaker_of, turn_paragraph, user_name
from memory.limits import MAX_DOCUMENT_CHARS

PER_PAGE = 200  # Slack asks for at most 200 a page on paginated methods
RECHECK_DAYS = 3
CHANNEL_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{6,20}$")
REFUSED = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive"}
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Channel:
    id: str
    name: str
    private: bool

    @property
    def audience(self) -> str:
        return self.id if self.private else ""


def _day_of(ts: str) -> str:
    return datetime.fromtimestamp(float(ts), UTC).date().isoformat()


def _day_start(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def window_start(newest: str) -> str:
    """Where a listing starts: the beginning of the day ``RECHECK_DAYS`` - 1 before the newest
    message read, so every day it lists is whole; everything on the first sync."""
    if not newest:
        return "0"
    return f"{_day_start(_day_of(newest)) - (RECHECK_DAYS - 1) * DAY.total_seconds():.6f}"


def _is_reply(message: dict[str, Any]) -> bool:
    thread = message.get("thread_ts")
    return bool(thread) and thread != message.get("ts")


def _is_thread(message: dict[str, Any]) -> bool:
    return not _is_reply(message) and int(message.get("reply_count") or 0) > 0


def _slim(message: dict[str, Any]) -> dict[str, Any]:
    """What a loose message carried in the cursor keeps: what its turn is made of."""
    keep = ("ts", "user", "username", "text", "subtype", "files", "user_profile", "edited")
    slim = {key: message[key] for key in keep if key in message}
    if "files" in slim:
        slim["files"] = [{"name": f.get("name")} for f in slim["files"] if isinstance(f, dict)]
    return slim


def thread_key(channel_id: str, ts: str) -> str:
    return f"thread:{channel_id}:{ts}"


def day_key(channel_id: str, ts: str) -> str:
    return f"day:{channel_id}:{_day_of(ts)}"


def source_id_of(key: str) -> str:
    """The item a recheck key names: ``C123/1700000000.000100`` or ``C123/2026-11-02``."""
    _kind, channel_id, rest = key.split(":", 2)
    return f"{channel_id}/{rest}"


@register
class Slack(Kind):
    slug = "slack"
    label = "Slack"
    credential_fields = {
        "token": "The app's Bot User OAuth Token (xoxb-…)",
        "signing_secret": "The app's Signing Secret (for its event webhook)",
    }
    option_fields = {
        "channels": "Channels, one per line, by name or id; leave empty for every channel the app is a member of"
    }
    list_fields = frozenset({"channels"})

    @classmethod
    def clean_options(cls, raw: dict[str, str]) -> dict[str, Any]:
        names = [line.strip().lstrip("#") for line in raw.get("channels", "").replace(",", "\n").splitlines()]
        names = [name if CHANNEL_ID.match(name) else name.lower() for name in names if name]
        if bad := [name for name in names if not (CHANNEL_ID.match(name) or CHANNEL_NAME.match(name))]:
            raise ValueError(f"{bad[0]!r} is not a Slack channel name or id; write #name or its id (C0123ABCD).")
        if len(names) > 200:
            raise ValueError("At most 200 channels in one connection.")
        return {"channels": list(dict.fromkeys(names))}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client_for(str(self.credentials.get("token", "")))
        self._names: dict[str, str] = {}
        self._emails: dict[str, str] = {}
        self._team_url = ""

    # The sync

    def pages(self, cursor: dict[str, Any]) -> Iterator[Page]:
        self._team_url = str(self._call(self.client.auth_test).get("url") or "")
        self._load_users()
        channels = self._channels()
        state: dict[str, Any] = copy.deepcopy(cursor.get("channels", {}))
        audiences = {c.id: self._audience(c) for c in channels if c.private}
        if self.rechecks:
            by_id = {c.id: c for c in channels}
            items = [item for key in self.rechecks if (item := self._rechecked(key, by_id)) is not None]
            touched = {item.audience for item in items if item.audience}
            yield Page(
                items=items,
                cursor={"channels": copy.deepcopy(state)},
                audiences=[audiences.pop(key) for key in sorted(touched)],
            )
        for channel in channels:
            first = [audiences.pop(channel.id)] if channel.id in audiences else []
            for page in self._listing(channel, state):
                yield Page(items=page, cursor={"channels": copy.deepcopy(state)}, audiences=first)
                first = []

    def _listing(self, channel: Channel, state: dict[str, Any]) -> Iterator[list[Item]]:
        """One channel's pages from where it left off; ``state[channel.id]`` is updated before each."""
        here = state.setdefault(channel.id, {})
        listing = here.get("listing") or {
            "start": window_start(here.get("newest", "")),
            "next": "",
            "newest": here.get("newest", ""),
            "carry": [],
            "seen": {},
        }
        while True:
            args = {"channel": channel.id, "oldest": listing["start"], "inclusive": True, "limit": PER_PAGE}
            answer = self._call(self.client.conversations_history, **args, cursor=listing["next"] or None)
            messages = [m for m in answer.get("messages", []) if not _is_reply(m) and m.get("ts")]
            nxt = str((answer.get("response_metadata") or {}).get("next_cursor") or "")
            items = [self._thread(channel, m["ts"]) for m in messages if _is_thread(m)]
            loose = listing["carry"] + [_slim(m) for m in messages if not _is_thread(m)]
            unfinished = _day_of(min(m["ts"] for m in messages)) if messages and nxt else None
            days: dict[str, list[dict[str, Any]]] = {}
            for message in loose:
                days.setdefault(_day_of(message["ts"]), []).append(message)
            listing["carry"] = days.pop(unfinished, []) if unfinished else []
            items += [self._day(channel, day, said) for day, said in sorted(days.items())]
            for item in items:
                if not item.gone:
                    listing["seen"][item.source_id] = item.metadata["at"]
            listing["newest"] = max([listing["newest"], *(m["ts"] for m in messages)], key=_number)
            if nxt:
                listing["next"] = nxt
                here["listing"] = listing
                yield [item for item in items if not item.gone]
                continue
            items += self._gone_since(channel, here.get("seen", {}), listing)
            newest = listing["newest"]
            keep_from = float(window_start(newest))
            here.clear()
            here.update(newest=newest, seen={k: at for k, at in listing["seen"].items() if at >= keep_from})
            yield items
            return

    @staticmethod
    def _gone_since(channel: Channel, before: dict[str, float], listing: dict[str, Any]) -> list[Item]:
        """What the last listing of this window held and this one does not: deleted in Slack."""
        start = float(listing["start"])
        gone = [key for key, at in before.items() if at >= start and key not in listing["seen"]]
        return [Item(source_id=key, version="", gone=True, audience=channel.audience) for key in sorted(gone)]

    def _rechecked(self, key: str, channels: dict[str, Channel]) -> Item | None:
        kind, channel_id, rest = key.split(":", 2) if key.count(":") >= 2 else ("", "", "")
        channel = channels.get(channel_id)
        if channel is None:
            return None  # not a channel this connection reads (any longer)
        if kind == "thread":
            return self._thread(channel, rest)
        if kind == "day":
            start = _day_start(rest)
            args = {"channel": channel.id, "oldest": f"{start:.6f}", "latest": f"{start + 86399.999999:.6f}"}
            said = [
                _slim(m)
                for m in self._all(self.client.conversations_history, "messages", inclusive=True, **args)
                if not _is_reply(m) and not _is_thread(m)
            ]
            return self._day(channel, rest, said)
        return None

    # What an item is made of

    def _thread(self, channel: Channel, ts: str) -> Item:
        try:
            said = self._all(self.client.conversations_replies, "messages", channel=channel.id, ts=ts)
        except SourceError as exc:
            if "thread_not_found" not in exc.message:
                raise
            said = []
        turns = self._turns(said, "%Y-%m-%d %H:%M")
        source_id = f"{channel.id}/{ts}"
        if not turns:
            return Item(source_id=source_id, version="", gone=True, audience=channel.audience)
        first = next((message_text(m, self._names) for m in said if m.get("ts") == ts), "") or "(deleted)"
        return self._item(
            channel,
            source_id,
            turns,
            said,
            at=float(ts),
            url=self._link(channel.id, ts),
            title=f"#{channel.name} thread {_day_of(ts)}: {first[:80]}",
            session=f"thread {ts}",
            kind="thread",
        )

    def _day(self, channel: Channel, day: str, said: list[dict[str, Any]]) -> Item:
        said = sorted(said, key=lambda m: _number(m["ts"]))
        turns = self._turns(said, "%H:%M")
        source_id = f"{channel.id}/{day}"
        if not turns:
            return Item(source_id=source_id, version="", gone=True, audience=channel.audience)
        return self._item(
            channel,
            source_id,
            turns,
            said,
            at=_day_start(day),
            url=self._link(channel.id, said[0]["ts"]),
            title=f"#{channel.name} {day}",
            session=day,
            kind="day",
        )

    def _item(
        self,
        channel: Channel,
        source_id: str,
        turns: list[tuple[str, str]],
        said: list[dict[str, Any]],
        *,
        at: float,
        url: str,
        title: str,
        session: str,
        kind: str,
    ) -> Item:
        content = "\n\n".join(turn for _who, turn in turns)[:MAX_DOCUMENT_CHARS]
        speakers = list(dict.fromkeys(who for who, _turn in turns))
        first = min((moment for m in said if (moment := message_time(m))), default=None)
        return Item(
            source_id=source_id,
            # Who reads it is part of it: a channel made private moves its documents at once.
            version=hashlib.sha256(f"{channel.audience}\n{content}".encode()).hexdigest()[:40],
            title=title[:500],
            content=content,
            url=url,
            occurred_at=first,
            conversation=f"slack:{channel.name}",
            session=session,
            audience=channel.audience,
            metadata={
                "channel": channel.name,
                "channel_id": channel.id,
                "private": channel.private,
                "kind": kind,
                "participants": speakers[:50],
                "speakers": speakers[:50],
                "messages": len(turns),
                "at": at,
            },
        )

    def _turns(self, said: list[dict[str, Any]], form: str) -> list[tuple[str, str]]:
        turns = []
        for message in said:
            if message.get("subtype") in SKIPPED_SUBTYPES or message.get("subtype") == "tombstone":
                continue
            if not (text := message_text(message, self._names)):
                continue
            self._know(message.get("user"))
            who, at = speaker_of(message, self._names), message_time(message)
            edited = " (edited)" if message.get("edited") else ""
            turns.append((who, turn_paragraph(who, at.strftime(form) if at else "--:--", text + edited)))
        return turns

    def _link(self, channel_id: str, ts: str) -> str:
        base = self._team_url or "https://slack.com/"
        return f"{base.rstrip('/')}/archives/{channel_id}/p{ts.replace('.', '')}"

    # Who is who

    def _load_users(self) -> None:
        for user in self._all(self.client.users_list, "members"):
            self._remember(user)

    def _remember(self, user: dict[str, Any]) -> None:
        self._names[user["id"]] = user_name(user)
        email = (user.get("profile") or {}).get("email")
        if isinstance(email, str) and email and not user.get("deleted") and not user.get("is_bot"):
            self._emails[user["id"]] = email.strip().lower()

    def _know(self, user_id: object) -> None:
        """Someone users.list did not name (a guest from another workspace): ask for them alone."""
        if isinstance(user_id, str) and user_id and user_id not in self._names:
            try:
                self._remember(self._call(self.client.users_info, user=user_id)["user"])
            except SourceError:
                self._names[user_id] = user_id  # ask once; their id stands in for their name

    def _audience(self, channel: Channel) -> Audience:
        members = self._all(self.client.conversations_members, "members", channel=channel.id)
        for member in members:
            if member not in self._emails:
                self._know(member)
        emails = frozenset(self._emails[m] for m in members if m in self._emails)
        return Audience(key=channel.id, name=f"Slack #{channel.name}", emails=emails)

    def _channels(self) -> list[Channel]:
        listed = self._all(
            self.client.conversations_list, "channels", types="public_channel,private_channel", exclude_archived=True
        )
        wanted = self.options.get("channels") or []
        if not wanted:
            return [_channel(c) for c in listed if c.get("is_member")]
        found = {c["id"]: c for c in listed} | {c.get("name", ""): c for c in listed}
        chosen = []
        for name in wanted:
            if name not in found:
                raise CredentialsRefused(
                    f"Slack shows the app no channel {name!r}: check the name, and for a private channel invite "
                    "the app to it first (/invite @your-app in the channel)."
                )
            if not found[name].get("is_member"):
                raise CredentialsRefused(
                    f"The app is not a member of #{found[name].get('name', name)}: invite it there (/invite "
                    "@your-app in the channel), then choose Sync now."
                )
            chosen.append(_channel(found[name]))
        return list({c.id: c for c in chosen}.values())

    # Talking to Slack

    def _all(self, method: Callable[..., Any], key: str, **args: Any) -> list[Any]:
        """Every page of a paginated method (Slack's cursor pagination)."""
        rows: list[Any] = []
        after = None
        while True:
            answer = self._call(method, **args, limit=PER_PAGE, cursor=after)
            rows += answer.get(key, [])
            after = (answer.get("response_metadata") or {}).get("next_cursor")
            if not after:
                return rows

    @staticmethod
    def _call(method: Callable[..., Any], **args: Any) -> dict[str, Any]:
        return call(method, **{key: value for key, value in args.items() if value is not None})


def _channel(row: dict[str, Any]) -> Channel:
    return Channel(id=row["id"], name=str(row.get("name") or row["id"]), private=bool(row.get("is_private")))


def _number(ts: str) -> float:
    return float(ts) if ts else 0.0


def client_for(token: str) -> WebClient:
    base = settings.BRAIN_SLACK_API_URL.rstrip("/") + "/"
    # No retries inside the client: a rate limit moves the whole sync to when Slack says.
    return WebClient(token=token, base_url=base, timeout=30, retry_handlers=[])


def call(method: Callable[..., Any], **args: Any) -> dict[str, Any]:
    """One Web API call; Slack's refusals as the sync's errors, in words a person can act on."""
    try:
        return dict(method(**args).data)
    except SlackApiError as exc:
        raise _refusal(exc) from None
    except (SlackClientError, OSError) as exc:
        raise SourceError(reach_failure("Slack", exc)) from None


def _refusal(exc: SlackApiError) -> SourceError:
    answer = exc.response
    error = str(answer.get("error") or "") if isinstance(answer.data, dict) else ""
    if answer.status_code == 429 or error == "ratelimited":
        wait = str(answer.headers.get("Retry-After") or answer.headers.get("retry-after") or "60")
        retry_at = datetime.now(UTC) + timedelta(seconds=int(wait) if wait.isdigit() else 60)
        return SourceError(f"Slack asked Brain to wait (rate limited, {wait} s); it goes on then.", retry_at=retry_at)
    if error in REFUSED:
        return CredentialsRefused(
            f"Slack refused the bot token ({error}): the app was uninstalled, its token revoked, or the person "
            "who installed it deactivated. Reinstall the app to the workspace, copy its Bot User OAuth Token "
            "(xoxb-…) and paste it under Replace credentials."
        )
    if error == "missing_scope":
        needed = str(answer.get("needed") or "a scope")
        return CredentialsRefused(
            f"The Slack app lacks the {needed} scope: add it under OAuth & Permissions → Bot Token Scopes, "
            "reinstall the app, and paste the new token under Replace credentials."
        )
    if error in ("not_in_channel", "channel_not_found"):
        return CredentialsRefused(
            f"Slack answered {error}: invite the app to each channel it should read (/invite @your-app), "
            "then choose Sync now."
        )
    return SourceError(f"Slack answered {error or f'HTTP {answer.status_code}'}; trying again later.")


def post_message(*, token: str, channel: str, text: str, thread_ts: str = "") -> str:
    """Post ``text`` to a channel (or a thread of it) as the app; the new message's ts. Needs the
    ``chat:write`` scope. Raises SourceError (CredentialsRefused for a token Slack refuses)."""
    args: dict[str, Any] = {"channel": channel, "text": text}
    if thread_ts:
        args["thread_ts"] = thread_ts
    return str(call(client_for(token).chat_postMessage, **args)["ts"])
