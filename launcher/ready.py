"""Waiting for Brain's processes to start before the credentials are shown.

``./brainctl run`` prints the first organisation, admin and token only once ``/healthz`` answers
and the worker and beat have printed the line that ends their start-up, so the credentials come
under the start-up logs rather than scrolled away above them. A slow machine starts slowly, not
never: the wait goes on while the processes keep printing (``progress`` changes) and gives up
only after ``idle`` seconds in which nothing moved.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping

IDLE_SECONDS = 120.0
# The line that ends each background process's start-up: a Celery worker logs
# "celery@host ready." once it consumes its queues, beat "beat: Starting..." once it schedules.
WORKER_READY = re.compile(r"@\S+ ready\.\s*$")
BEAT_READY = re.compile(r"beat: Starting")


def ready_lines(names: Iterable[str]) -> dict[str, re.Pattern[str]]:
    """The line to wait for from each of ``names`` (``processes.local_commands``): the workers'
    and beat's. The web is waited for through its health probe instead."""
    wanted = {name: WORKER_READY for name in names if name.startswith("worker")}
    return wanted | ({"beat": BEAT_READY} if "beat" in names else {})


def message_of(line: str) -> str:
    """A printed line's message: the line itself, or its ``message`` when it is a JSON log line
    (BRAIN_LOG_FORMAT=json, brain.infra.logs)."""
    if line.startswith("{"):
        try:
            found = json.loads(line)
        except ValueError:
            return line
        if isinstance(found, dict) and isinstance(found.get("message"), str):
            return str(found["message"])
    return line


class StartUp:
    """What the processes have printed so far: how many lines (progress while waiting) and which
    of the processes in ``waiting_for`` have printed the line that says they are ready. Fed by
    the output pump's threads."""

    def __init__(self, waiting_for: Mapping[str, re.Pattern[str]]) -> None:
        self.waiting_for = dict(waiting_for)
        self.lines = 0
        self.started: set[str] = set()
        self._lock = threading.Lock()

    def saw(self, name: str, line: str) -> None:
        with self._lock:
            self.lines += 1
            pattern = self.waiting_for.get(name)
            if pattern is not None and pattern.search(message_of(line)):
                self.started.add(name)

    def not_started(self) -> list[str]:
        """The processes that have not said they are ready yet, in the order they were named."""
        with self._lock:
            return [name for name in self.waiting_for if name not in self.started]

    def all_started(self) -> bool:
        return not self.not_started()


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
    also: Callable[[], bool] = lambda: True,
) -> bool:
    """Return True once ``url`` answers 200 and ``also()`` holds (the other processes have
    started); False when ``stopping()`` or when ``progress()`` has not changed for ``idle``
    seconds. ``tick`` runs between tries (the supervisor restarting a child)."""
    last, since = progress(), clock()
    while not stopping():
        if answers(url, timeout=min(2.0, max(poll, 0.1) * 10)) and also():
            return True
        tick()
        now = progress()
        if now != last:
            last, since = now, clock()
        elif clock() - since > idle:
            return False
        time.sleep(poll)
    return False
