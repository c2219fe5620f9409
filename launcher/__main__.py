"""Run Brain and its test suite on the embedded services. Used through ./brainctl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO

from launcher import services

PYTHON = sys.executable
COLOURS = {"web": "\033[36m", "worker": "\033[33m", "beat": "\033[35m"}
RESET = "\033[0m"


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    env.setdefault("DJANGO_SETTINGS_MODULE", "brain.settings")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def manage(args: Sequence[str], env: dict[str, str], check: bool = True) -> int:
    return subprocess.run([PYTHON, "manage.py", *args], env=env, cwd=services.ROOT, check=check).returncode


def _pump(name: str, stream: IO[bytes], lock: threading.Lock) -> None:
    colour = COLOURS.get(name, "") if sys.stdout.isatty() else ""
    prefix = f"{colour}{name:>6} |{RESET if colour else ''} "
    for raw in iter(stream.readline, b""):
        with lock:
            sys.stdout.write(prefix + raw.decode(errors="replace"))
            sys.stdout.flush()


def run(argv: Sequence[str]) -> int:
    env = child_env(services.ensure_services())
    port = os.environ.get("BRAIN_PORT", "8000")
    host = os.environ.get("BRAIN_HOST", "127.0.0.1")
    manage(["migrate", "--no-input", "-v", "0"], env)
    manage(["collectstatic", "--no-input", "-v", "0"], env)
    manage(["bootstrap", "--base-url", f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{port}"], env)
    commands = {
        "web": [PYTHON, "-m", "uvicorn", "brain.asgi:application", "--host", host, "--port", port,
                "--no-access-log" if "--quiet" in argv else "--access-log"],
        "worker": [PYTHON, "-m", "celery", "-A", "brain", "worker", "-l", "info", "--concurrency", "2",
                   "-Q", "celery,ingest,dispatch,jobs,nightly", "-n", "brain@%h"],
        "beat": [PYTHON, "-m", "celery", "-A", "brain", "beat", "-l", "info",
                 "--scheduler", "django_celery_beat.schedulers:DatabaseScheduler"],
    }  # fmt: skip
    lock = threading.Lock()
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for name, cmd in commands.items():
        proc = subprocess.Popen(
            cmd, env=env, cwd=services.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        procs[name] = proc
        assert proc.stdout is not None
        threading.Thread(target=_pump, args=(name, proc.stdout, lock), daemon=True).start()

    stopping = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    exit_code = 0
    while not stopping.is_set():
        for name, proc in procs.items():
            if proc.poll() is not None:
                print(f"brain: {name} exited with status {proc.returncode}; stopping the rest", flush=True)
                exit_code = proc.returncode or 1
                stopping.set()
        stopping.wait(0.5)
    print("brain: stopping web, worker and beat", flush=True)
    for proc in procs.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for proc in procs.values():
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    if os.environ.get("BRAIN_KEEP_SERVICES") != "1":
        stop()
    print("brain: stopped", flush=True)
    return exit_code


def stop() -> int:
    if not os.environ.get("REDIS_URL") and services.stop_redis():
        print("brain: embedded Redis stopped", flush=True)
    if not os.environ.get("DATABASE_URL") and services.stop_postgres():
        print("brain: embedded PostgreSQL stopped", flush=True)
    return 0


def test(argv: Sequence[str]) -> int:
    # Services a developer already runs stay up; ones started just for the tests stop after them.
    already_running = services.running()
    env = child_env(services.ensure_services())
    try:
        return _run_checks(argv, env)
    finally:
        if not already_running:
            stop()


def _run_checks(argv: Sequence[str], env: dict[str, str]) -> int:
    # Tests use their own Redis database so a running Brain keeps its queues.
    env["REDIS_URL"] = env.get("REDIS_URL", os.environ.get("REDIS_URL", "")).rsplit("/", 1)[0] + "/9"
    env["BRAIN_TESTING"] = "1"
    steps = [
        ("ruff check", [PYTHON, "-m", "ruff", "check", "."]),
        ("ruff format", [PYTHON, "-m", "ruff", "format", "--check", "."]),
        ("mypy", [PYTHON, "-m", "mypy"]),
        ("pytest", [PYTHON, "-m", "pytest", *argv]),
    ]
    if argv:  # a focused run: only the tests that were named
        steps = steps[-1:]
    for name, cmd in steps:
        print(f"==> {name}", flush=True)
        code = subprocess.run(cmd, env=env, cwd=services.ROOT).returncode
        if code != 0:
            print(f"==> {name} failed with status {code}", flush=True)
            return code
    return 0


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python -m launcher run|test|stop|services|manage ...", file=sys.stderr)
        return 2
    command, argv = sys.argv[1], sys.argv[2:]
    if command == "run":
        return run(argv)
    if command == "test":
        return test(argv)
    if command == "stop":
        return stop()
    if command == "services":
        for key, value in services.ensure_services().items():
            print(f"{key}={value}")
        return 0
    if command == "manage":
        env = child_env(services.ensure_services())
        return manage(argv, env, check=False)
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
