"""The shared wait of tests on background work: as long as it moves, not for a fixed time."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.progress import wait_while_progressing


def test_it_waits_longer_than_the_idle_interval_while_the_work_keeps_moving():
    ticks = itertools.count()
    started = time.monotonic()
    # Each step takes 0.05 s and the whole wait about 1 s: twenty times the idle interval.
    wait_while_progressing(
        lambda: next(ticks) >= 20, lambda: time.monotonic() // 0.04, what="ticks", idle=0.05, poll=0.05
    )
    assert time.monotonic() - started > 0.05 * 10


def test_it_fails_only_once_nothing_has_moved_for_the_idle_interval_and_says_what_it_waited_for():
    with pytest.raises(AssertionError, match="nothing moved for 0 s while waiting for the queue to empty"):
        wait_while_progressing(
            lambda: False, lambda: 7, what="the queue to empty", idle=0.2, poll=0.05, details=lambda: "worker log"
        )
