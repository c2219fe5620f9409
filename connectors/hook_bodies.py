"""What a webhook body must hold before Brain acts on it (connectors.hooks): a JSON object of the
shape its source sends, with the keys Brain reads of the types it reads them as. Anything else is
refused with a sentence naming what was wrong, whoever signed it."""

from __future__ import annotations

import json
from typing import Any

ITEM_KEYS = {"issues": "issue", "pull_request": "pull_request"}  # GitHub event -> the key of its item
JSON_NAMES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}


class BadBody(Exception):
    """A signed body that is not what the source sends; ``message`` says what is wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _named(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return JSON_NAMES.get(type(value), type(value).__name__)


def json_object(body: bytes, source: str) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        raise BadBody(f"The body is not JSON; {source} sends a JSON object.") from None
    if not isinstance(payload, dict):
        raise BadBody(f"The body is {_named(payload)}, not the JSON object {source} sends.")
    return payload


def field(payload: dict[str, Any], key: str, kind: type, where: str, *, required: bool = True) -> Any:
    """``payload[key]`` when it is of ``kind`` (a whole number for ``int``, never a boolean); absent
    is allowed unless ``required``, and then is None."""
    value = payload.get(key)
    if value is None and not required:
        return None
    if value is None or not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        wanted = JSON_NAMES.get(kind, kind.__name__)
        found = "missing" if key not in payload else _named(value)
        raise BadBody(f"{where}.{key} must be {wanted}; it is {found}.")
    return value


def github_payload(event: str, body: bytes) -> dict[str, Any]:
    """A GitHub delivery's body; for issue and pull request events, the parts Brain reads."""
    payload = json_object(body, "GitHub")
    item = ITEM_KEYS.get(event)
    repository = field(payload, "repository", dict, "the body", required=item is not None)
    if repository is not None:
        field(repository, "full_name", str, "repository")
    if item is not None:
        field(payload, "action", str, "the body")
        field(field(payload, item, dict, "the body"), "number", int, item)
    return payload


def slack_payload(body: bytes) -> dict[str, Any]:
    """A Slack Events API request's body; for a message event, the parts Brain reads."""
    payload = json_object(body, "Slack")
    kind = field(payload, "type", str, "the body")
    if kind == "url_verification":
        field(payload, "challenge", str, "the body")
    if kind != "event_callback":
        return payload
    field(payload, "event_id", str, "the body")
    event = field(payload, "event", dict, "the body")
    if field(event, "type", str, "event") == "message":
        field(event, "channel", str, "event")
        for key in ("subtype", "ts", "deleted_ts", "thread_ts"):
            field(event, key, str, "event", required=False)
        for key in ("message", "previous_message"):
            if (inner := field(event, key, dict, "event", required=False)) is not None:
                for text in ("ts", "thread_ts"):
                    field(inner, text, str, f"event.{key}", required=False)
    return payload
