"""Waiting for the web server to answer before the credentials are shown.

``./brainctl run`` prints the first organisation, admin and token only once ``/healthz`` answers,
so they are the last thing on the screen, under the start-up logs rather than scrolled away above
them. A slow machine starts slowly, not never: the wait goes on while the processes keep printing
(``progress`` changes) and gives up only after ``idle`` seconds in which nothing moved.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable

IDLE_SECONDS = 120.0


def answers(url: str, *, timeout: float = 2.0) -> bool:
    """Whether ``url`` answers 200 now."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (our own loopback URL)
            return int(response.status) == 200
    except (OSError, urllib.error.URLError, ValueError):
        return False


def wait_until_answers(
    url: str,
    *,
    progress: Callable[[], object],
    stopping: Callable[[], bool] = lambda: False,
    tick: Callable[[], None] = lambda: None,
    idle: float = IDLE_SECONDS,
    poll: float = 0.2,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Return True once ``url`` answers 200; False when ``stopping()`` or when ``progress()`` has not
    changed for ``idle`` seconds. ``tick`` runs between tries (the supervisor restarting a child)."""
    last, since = progress(), clock()
    while not stopping():
        if answers(url, timeout=min(2.0, max(poll, 0.1) * 10)):
            return True
        tick()
        now = progress()
        if now != last:
            last, since = now, clock()
        elif clock() - since > idle:
            return False
        time.sleep(poll)
    return False
