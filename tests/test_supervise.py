"""The launcher's supervisor on real child processes: the dead are started again, the rest untouched."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from launcher.supervise import Supervisor
from tests.progress import wait_while_progressing


def drain(name, stream):
    stream.read()


def run_until(supervisor: Supervisor, done: Callable[[], bool], *, what: str) -> None:
    """Supervise until ``done()``, as long as children keep being started again (however slowly a
    busy machine starts a Python process)."""

    def checked() -> bool:
        supervisor.check()
        return done()

    def restarts() -> tuple[int, ...]:
        return tuple(child.restarts for child in supervisor.children.values())

    wait_while_progressing(checked, restarts, what=what, poll=0.02)


def test_a_child_that_dies_is_started_again_after_a_growing_pause_and_the_others_keep_running(tmp_path: Path):
    lines: list[str] = []
    supervisor = Supervisor(
        {
            "flaky": [sys.executable, "-c", "raise SystemExit(3)"],
            "steady": [sys.executable, "-c", "import time; time.sleep(60)"],
        },
        env={},
        cwd=tmp_path,
        output=drain,
        first_delay=0.1,
        max_delay=0.4,
        log=lines.append,
    )
    supervisor.start_all()
    started = supervisor.children["steady"].process
    assert started is not None
    steady_pid = started.pid
    try:
        run_until(supervisor, lambda: supervisor.children["flaky"].restarts >= 4, what="four restarts of flaky")
    finally:
        supervisor.stop_all(timeout=5)
    flaky, steady = supervisor.children["flaky"], supervisor.children["steady"]
    assert flaky.restarts >= 3
    assert set(flaky.history) == {3}
    delays = [
        float(d) for d in re.findall(r"flaky exited with status 3; starting it again in ([\d.]+) s", "\n".join(lines))
    ]
    assert delays[:4] == [0.1, 0.2, 0.4, 0.4]
    assert steady.restarts == 0
    assert steady.process is not None
    assert steady.process.pid == steady_pid
    assert steady.history == []


def test_a_child_that_ran_steadily_before_dying_comes_back_after_the_shortest_pause(tmp_path: Path):
    supervisor = Supervisor({"web": [sys.executable, "-c", "pass"]}, env={}, cwd=tmp_path, output=drain, log=print)
    child = supervisor.children["web"]
    child.quick_exits = 4
    assert supervisor.delay_after_exit(child, ran_for=120) == 1.0
    assert child.quick_exits == 0
    assert supervisor.delay_after_exit(child, ran_for=0.5) == 1.0
    assert supervisor.delay_after_exit(child, ran_for=0.5) == 2.0
