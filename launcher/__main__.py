"""Run Brain and its test suite on the embedded services. Used through ./brainctl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

from launcher import processes, ready, services
from launcher.supervise import Supervisor, pump

PYTHON = sys.executable
COLOURS = {"web": "\033[36m", "worker": "\033[33m", "beat": "\033[35m"}


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    for key, value in processes.PROCESS_ENV.items():
        env.setdefault(key, value)
    return env


def manage(args: Sequence[str], env: dict[str, str], check: bool = True) -> int:
    return subprocess.run(processes.manage_command(args), env=env, cwd=services.ROOT, check=check).returncode


def manage_output(args: Sequence[str], env: dict[str, str]) -> str:
    """A management command's output, kept to be printed later (its errors still go to the screen)."""
    command = processes.manage_command(args)
    return subprocess.run(command, env=env, cwd=services.ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout


def base_url(host: str, port: str) -> str:
    """Where the instance about to start is reached: BRAIN_BASE_URL when the operator set it (a
    proxy's public address), else the address it binds (loopback when it binds every interface)."""
    if os.environ.get("BRAIN_BASE_URL", "").strip():
        return os.environ["BRAIN_BASE_URL"].strip().rstrip("/")
    return f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{port}"  # noqa: S104 (compares, binds nothing)


def run(argv: Sequence[str]) -> int:
    env = child_env(services.ensure_services())
    port = os.environ.get("BRAIN_PORT", "8000")
    host = os.environ.get("BRAIN_HOST", "127.0.0.1")
    manage(processes.MIGRATE, env)
    manage(processes.COLLECTSTATIC, env)
    # Printed once the web answers, so the credentials end up under the start-up logs, not above them.
    banner = manage_output(processes.bootstrap_args(base_url(host, port)), env)
    printed = [0]

    def count_line() -> None:
        printed[0] += 1

    supervisor = Supervisor(
        processes.local_commands(host=host, port=int(port), access_log="--quiet" not in argv),
        env=env,
        cwd=services.ROOT,
        output=pump(threading.Lock(), COLOURS, on_line=count_line),
        first_delay=float(os.environ.get("BRAIN_RESTART_DELAY_SECONDS", "1")),
    )
    stopping = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    supervisor.start_all()
    local = f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{port}/healthz"  # noqa: S104 (compares only)
    up = ready.wait_until_answers(
        local,
        progress=lambda: (printed[0], [c.restarts for c in supervisor.children.values()]),
        stopping=stopping.is_set,
        tick=supervisor.check,
    )
    if not stopping.is_set():
        print_banner(banner, up=up)
    while not stopping.is_set():
        supervisor.check()
        stopping.wait(0.5)
    print("brain: stopping web, worker and beat", flush=True)
    supervisor.stop_all()
    if os.environ.get("BRAIN_KEEP_SERVICES") != "1":
        stop()
    print("brain: stopped", flush=True)
    return 0


def print_banner(banner: str, *, up: bool) -> None:
    rule = "-" * 72
    state = "Brain is up." if up else "The web server has not answered yet; its log above says why."
    print(f"\n{rule}\n{state}\n{banner.rstrip()}\n(./brainctl credentials shows these again.)\n{rule}", flush=True)


def credentials() -> int:
    env = child_env(services.ensure_services())
    port = os.environ.get("BRAIN_PORT", "8000")
    host = os.environ.get("BRAIN_HOST", "127.0.0.1")
    return manage(["credentials", "--base-url", base_url(host, port)], env, check=False)


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
        print("usage: python -m launcher run|test|stop|credentials|services|manage ...", file=sys.stderr)
        return 2
    command, argv = sys.argv[1], sys.argv[2:]
    if command == "run":
        return run(argv)
    if command == "test":
        return test(argv)
    if command == "stop":
        return stop()
    if command == "credentials":
        return credentials()
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
