"""Walking one paged listing of a source from a saved position.

A listing's state is a small dict kept in the connection's cursor: ``since`` (the newest time an
earlier sync read up to), and in the middle of a listing ``next`` (the next page's address),
``newest`` (the newest time read so far in this walk) and ``hold`` (the oldest time of something
read unfinished, such as a deployment still in progress, so the next walk reads it again). After
each page the walk hands back the page's items with the state to resume from, so a sync stopped
between pages goes on from the page it was on. When the listing ends, ``since`` moves to the
newest time read (or back to the oldest held one).

Listings ordered oldest first (GitHub's issues by update time) run to their end; listings ordered
newest first (commits, releases, deployments, Sentry's issues) say ``done`` when they reach what
an earlier walk read, and the walk stops there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from connectors.kinds import Item


@dataclass
class Read:
    items: list[Item]
    stamps: list[str]  # the times of what was read (ISO 8601, so they order as text)
    done: bool = False  # reached what an earlier walk read: no need for the next page
    hold: list[str] = field(default_factory=list)  # times to read again from next time


Fetch = Callable[[str, dict[str, str] | None], tuple[Any, str | None]]  # (body, next page's address)


def walk(
    *,
    fetch: Fetch,
    first: str,
    params: Callable[[str | None], dict[str, str]],
    read: Callable[[Any, str | None], Read],
    state: dict[str, Any],
) -> Iterator[tuple[list[Item], dict[str, Any]]]:
    url: str | None = state.get("next") or first
    since = state.get("since")
    query: dict[str, str] | None = None if state.get("next") else params(since)
    while url:
        body, following = fetch(url, query)
        got = read(body, since)
        newest = max([*got.stamps, state.get("newest") or ""]) or None
        held = [*got.hold, *([state["hold"]] if state.get("hold") else [])]
        hold = min(held) if held else None
        url, query = (None if got.done else following), None
        if url:
            state = {"since": since, "next": url, "newest": newest, "hold": hold}
        else:
            moved = min(hold, newest) if hold and newest else newest
            state = {"since": moved or since}
        yield got.items, state
