"""A Slack stand-in on loopback for the Web API methods the connector calls, shaped as Slack
documents them: each method at ``/api/<method>``, arguments as a query string (GET), a form or a
JSON body (POST), the bot token as a bearer header; every answer ``{"ok": ...}``, a refusal as
``ok: false`` with its ``error`` (``invalid_auth``, ``token_revoked``, ``channel_not_found``,
``thread_not_found``); cursor pagination through ``response_metadata.next_cursor`` with ``limit``;
``conversations.history`` newest first within ``oldest``/``latest`` (``inclusive``), thread replies
left out of it and counted on their parent (``reply_count``, ``latest_reply``); ``conversations.list``
showing private channels only to members; rate limits as HTTP 429 with ``Retry-After``."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from connectors.tests.stand_in import QuietHandler, send_json, serving

BOT = "UBOT0001"


def ts_at(when: str, seq: int = 0) -> str:
    """A message ts for an ISO time ("2026-11-02T10:00"), ``seq`` microseconds in."""
    moment = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return f"{int(moment.timestamp())}.{seq:06d}"


def _page_token(value: str) -> str:
    return base64.b64encode(f"next:{value}".encode()).decode()


def _read_token(token: str) -> str:
    return base64.b64decode(token.encode()).decode().removeprefix("next:")


@dataclass
class FakeSlack:
    token: str = "xoxb-valid"
    revoked: set[str] = field(default_factory=set)
    users: list[dict[str, Any]] = field(default_factory=list)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    # the next answers to give instead of the real one: (status, headers, body)
    refusals: list[tuple[int, dict[str, str], dict[str, Any]]] = field(default_factory=list)
    # answer internal_error once on the history call with this many calls of it before
    fail_history_call: int | None = None
    base: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # The workspace

    def add_user(self, user_id: str, name: str, email: str = "") -> None:
        profile = {"real_name": name, "display_name": name.split()[0]}
        if email:
            profile["email"] = email
        self.users.append({"id": user_id, "name": name.split()[0].lower(), "real_name": name, "profile": profile})

    def add_channel(self, channel_id: str, name: str, *, private: bool = False, members: list[str] = ()) -> None:  # type: ignore[assignment]
        self.channels[channel_id] = {"id": channel_id, "name": name, "is_private": private,
                                     "members": [BOT, *members], "messages": []}  # fmt: skip

    def post(self, channel_id: str, ts: str, user: str, text: str, *, thread_ts: str = "") -> dict[str, Any]:
        message = {"type": "message", "ts": ts, "user": user, "text": text}
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.channels[channel_id]["messages"].append(message)
        return message

    def edit(self, channel_id: str, ts: str, text: str, *, at: str) -> None:
        for message in self.channels[channel_id]["messages"]:
            if message["ts"] == ts:
                message["text"], message["edited"] = text, {"user": message["user"], "ts": at}

    def delete(self, channel_id: str, ts: str) -> None:
        messages = self.channels[channel_id]["messages"]
        self.channels[channel_id]["messages"] = [m for m in messages if m["ts"] != ts]

    # Answering

    def answer(self, method: str, token: str, args: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.calls.append((method, args))
            if self.refusals:
                return self.refusals.pop(0)
            if token in self.revoked:
                return 200, {}, {"ok": False, "error": "token_revoked"}
            if token != self.token:
                return 200, {}, {"ok": False, "error": "invalid_auth"}
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            if handler is None:
                return 404, {}, {"ok": False, "error": "unknown_method"}
            return 200, {}, {"ok": True, **handler(args)}

    def _paged(self, rows: list[Any], key: str, args: dict[str, str]) -> dict[str, Any]:
        start = int(_read_token(args["cursor"])) if args.get("cursor") else 0
        limit = int(args.get("limit") or 100)
        chunk = rows[start : start + limit]
        more = start + limit < len(rows)
        return {key: chunk, "response_metadata": {"next_cursor": _page_token(str(start + limit)) if more else ""}}

    def _auth_test(self, args: dict[str, str]) -> dict[str, Any]:
        return {"url": "https://acme.slack.example/", "team": "Acme", "user_id": BOT, "bot_id": "B0001"}

    def _users_list(self, args: dict[str, str]) -> dict[str, Any]:
        return self._paged(self.users, "members", args)

    def _users_info(self, args: dict[str, str]) -> dict[str, Any]:
        user = next((u for u in self.users if u["id"] == args.get("user")), None)
        return {"user": user} if user else {"ok": False, "error": "user_not_found"}

    def _conversations_list(self, args: dict[str, str]) -> dict[str, Any]:
        rows = [
            {"id": c["id"], "name": c["name"], "is_private": c["is_private"], "is_member": BOT in c["members"]}
            for c in self.channels.values()
            if not c["is_private"] or BOT in c["members"]
        ]
        return self._paged(rows, "channels", args)

    def _channel(self, args: dict[str, str]) -> dict[str, Any] | None:
        channel = self.channels.get(args.get("channel", ""))
        return channel if channel and BOT in channel["members"] else None

    def _conversations_members(self, args: dict[str, str]) -> dict[str, Any]:
        channel = self._channel(args)
        return (
            self._paged(channel["members"], "members", args) if channel else {"ok": False, "error": "channel_not_found"}
        )

    def _conversations_history(self, args: dict[str, str]) -> dict[str, Any]:
        channel = self._channel(args)
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        number = sum(1 for method, _ in self.calls if method == "conversations.history") - 1
        if self.fail_history_call == number:
            self.fail_history_call = None
            return {"ok": False, "error": "internal_error"}
        inclusive = args.get("inclusive") in ("1", "true")
        oldest, latest = float(args.get("oldest") or 0), float(args.get("latest") or 9e12)
        below = float(_read_token(args["cursor"])) if args.get("cursor") else None

        def within(ts: float) -> bool:
            low = ts >= oldest if inclusive else ts > oldest
            high = ts <= latest if inclusive else ts < latest
            return low and high and (below is None or ts < below)

        top = [self._shown(channel, m) for m in channel["messages"] if m.get("thread_ts", m["ts"]) == m["ts"]]
        rows = sorted((m for m in top if within(float(m["ts"]))), key=lambda m: float(m["ts"]), reverse=True)
        limit = int(args.get("limit") or 100)
        chunk, more = rows[:limit], len(rows) > limit
        # Slack's cursor points at where the page ended, so messages posted meanwhile never shift it.
        return {"messages": chunk, "has_more": more,
                "response_metadata": {"next_cursor": _page_token(chunk[-1]["ts"]) if more else ""}}  # fmt: skip

    @staticmethod
    def _shown(channel: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        replies = [m for m in channel["messages"] if m.get("thread_ts") == message["ts"] and m["ts"] != message["ts"]]
        if not replies:
            return {key: value for key, value in message.items() if key != "thread_ts"}
        latest = max(replies, key=lambda m: float(m["ts"]))["ts"]
        return {**message, "thread_ts": message["ts"], "reply_count": len(replies), "latest_reply": latest}

    def _conversations_replies(self, args: dict[str, str]) -> dict[str, Any]:
        channel = self._channel(args)
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        ts = args.get("ts", "")
        parent = [m for m in channel["messages"] if m["ts"] == ts]
        replies = [m for m in channel["messages"] if m.get("thread_ts") == ts and m["ts"] != ts]
        if not parent and not replies:
            return {"ok": False, "error": "thread_not_found"}
        if not parent:  # a parent deleted under its replies stays as a tombstone
            parent = [{"type": "message", "subtype": "tombstone", "ts": ts, "text": "This message was deleted."}]
        rows = [{**parent[0], "thread_ts": ts}, *sorted(replies, key=lambda m: float(m["ts"]))]
        return self._paged(rows, "messages", args)

    def _chat_postMessage(self, args: dict[str, str]) -> dict[str, Any]:  # noqa: N802 (Slack's method name)
        channel = self._channel(args)
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        ts = f"{datetime.now(UTC).timestamp():.6f}"
        message = self.post(args["channel"], ts, BOT, str(args.get("text", "")), thread_ts=args.get("thread_ts", ""))
        return {"channel": args["channel"], "ts": ts, "message": message}


def _arguments(handler: BaseHTTPRequestHandler, body: bytes) -> dict[str, str]:
    parts = urlsplit(handler.path)
    args = {key: values[0] for key, values in parse_qs(parts.query).items()}
    kind = handler.headers.get("Content-Type", "")
    if body and kind.startswith("application/json"):
        args.update({key: value for key, value in json.loads(body).items()})
    elif body:
        args.update({key: values[0] for key, values in parse_qs(body.decode()).items()})
    return args


@contextmanager
def slack_server() -> Iterator[FakeSlack]:
    fake = FakeSlack()

    class Handler(QuietHandler):
        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            method = urlsplit(self.path).path.removeprefix("/api/")
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            status, headers, answer = fake.answer(method, token, _arguments(self, body))
            if answer.get("ok") is True and answer.get("error"):
                answer["ok"] = False  # a handler's refusal
            send_json(self, status, headers, answer, "application/json; charset=utf-8")

        do_GET = do_POST = _serve  # noqa: N815 (the standard library's names)

    with serving(Handler) as base:
        fake.base = base + "/api/"
        yield fake
