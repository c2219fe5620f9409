"""Keeping Brain's processes up: a child that exits is started again after a pause that grows.

One child going down (the worker losing its broker, beat losing the database) must not take the
others with it: the web keeps serving reads while the worker or Redis is away. A child that
keeps dying at once waits longer each time (1 s, 2 s, 4 s ... up to ``max_delay``); one that
ran for ``steady_after`` seconds before exiting starts again after the shortest pause.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

Output = Callable[[str, IO[bytes]], None]


@dataclass
class Child:
    name: str
    command: Sequence[str]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    quick_exits: int = 0  # exits in a row that came soon after a start
    restart_at: float | None = None
    restarts: int = 0
    history: list[int] = field(default_factory=list)  # exit statuses, oldest first


class Supervisor:
    def __init__(
        self,
        commands: Mapping[str, Sequence[str]],
        *,
        env: Mapping[str, str],
        cwd: Path,
        output: Output,
        first_delay: float = 1.0,
        max_delay: float = 30.0,
        steady_after: float = 60.0,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.children = {name: Child(name, list(command)) for name, command in commands.items()}
        self.env, self.cwd, self.output = dict(env), cwd, output
        self.first_delay, self.max_delay, self.steady_after = first_delay, max_delay, steady_after
        self.log = log or (lambda line: print(f"brain: {line}", flush=True))

    def start_all(self) -> None:
        for child in self.children.values():
            self._start(child)

    def _start(self, child: Child) -> None:
        # A session of its own, so stopping a child reaches its whole process group (pool workers).
        child.process = subprocess.Popen(
            child.command,
            env=self.env,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        child.started_at, child.restart_at = time.monotonic(), None
        assert child.process.stdout is not None  # noqa: S101 (narrows the type: stdout=PIPE always gives one)
        threading.Thread(target=self.output, args=(child.name, child.process.stdout), daemon=True).start()

    def delay_after_exit(self, child: Child, ran_for: float) -> float:
        child.quick_exits = 0 if ran_for >= self.steady_after else child.quick_exits + 1
        return float(min(self.first_delay * 2 ** max(child.quick_exits - 1, 0), self.max_delay))

    def check(self) -> None:
        """Notice children that exited, and start again those whose pause is over."""
        now = time.monotonic()
        for child in self.children.values():
            process = child.process
            if process is not None and child.restart_at is None and process.poll() is not None:
                child.history.append(process.returncode)
                delay = self.delay_after_exit(child, now - child.started_at)
                child.restart_at = now + delay
                self.log(
                    f"{child.name} exited with status {process.returncode}; "
                    f"starting it again in {delay:g} s (restart {child.restarts + 1})"
                )
            elif child.restart_at is not None and now >= child.restart_at:
                child.restarts += 1
                self._start(child)
                self.log(f"{child.name} started again (pid {child.process.pid if child.process else '?'})")

    def stop_all(self, timeout: float = 20) -> None:
        running = [c.process for c in self.children.values() if c.process is not None and c.process.poll() is None]
        for process in running:
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in running:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(5)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def pump(lock: threading.Lock, colours: Mapping[str, str], on_line: Callable[[str, str], None] | None = None) -> Output:
    """Copy a child's output to ours, each line prefixed with the child's name; ``on_line`` is
    called with the child's name and the line after it is written (the launcher counts lines as
    progress and watches for the ones that say a process is ready)."""
    reset = "\033[0m"

    def copy(name: str, stream: IO[bytes]) -> None:
        colour = colours.get(name, "") if sys.stdout.isatty() else ""
        prefix = f"{colour}{name:>6} |{reset if colour else ''} "
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace")
            with lock:
                sys.stdout.write(prefix + line)
                sys.stdout.flush()
                if on_line is not None:
                    on_line(name, line)
        stream.close()

    return copy
