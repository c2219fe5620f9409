"""Run Brain and its test suite on the embedded services. Used through ./brainctl."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

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


def fresh_metrics_dir(env: dict[str, str]) -> str:
    """The folder the processes about to start share for their counters (brain.infra.metrics):
    the operator's PROMETHEUS_MULTIPROC_DIR, or one in the data folder. Emptied first: files left
    by processes of an earlier run would add their counts to this one's."""
    path = Path(env.get("PROMETHEUS_MULTIPROC_DIR") or services.data_dir() / "metrics")
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.db"):
        old.unlink()
    return str(path)


def run(argv: Sequence[str]) -> int:
    env = child_env(services.ensure_services())
    env["PROMETHEUS_MULTIPROC_DIR"] = fresh_metrics_dir(env)
    port = os.environ.get("BRAIN_PORT", "8000")
    host = os.environ.get("BRAIN_HOST", "127.0.0.1")
    manage(processes.MIGRATE, env)
    manage(processes.COLLECTSTATIC, env)
    # Printed once every process has started, so the credentials come under the start-up logs.
    banner = manage_output(processes.bootstrap_args(base_url(host, port)), env)
    commands = processes.local_commands(host=host, port=int(port), access_log="--quiet" not in argv)
    startup = ready.StartUp(ready.ready_lines(list(commands)))
    supervisor = Supervisor(
        commands,
        env=env,
        cwd=services.ROOT,
        output=pump(threading.Lock(), COLOURS, on_line=startup.saw),
        first_delay=float(os.environ.get("BRAIN_RESTART_DELAY_SECONDS", "1")),
    )
    stopping = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    local = f"http://{host if host != '0.0.0.0' else '127.0.0.1'}:{port}/healthz"  # noqa: S104 (compares only)
    start_and_announce(supervisor, startup=startup, health_url=local, banner=banner, stopping=stopping.is_set)
    while not stopping.is_set():
        supervisor.check()
        stopping.wait(0.5)
    print("brain: stopping web, worker and beat", flush=True)
    supervisor.stop_all()
    if os.environ.get("BRAIN_KEEP_SERVICES") != "1":
        stop()
    print("brain: stopped", flush=True)
    return 0


def start_and_announce(
    supervisor: Supervisor,
    *,
    startup: ready.StartUp,
    health_url: str,
    banner: str,
    stopping: Callable[[], bool],
    idle: float = ready.IDLE_SECONDS,
) -> None:
    """Start every process, wait until the web answers ``health_url`` and the others have printed
    the line that ends their start-up (for as long as they keep printing), then print ``banner``."""
    supervisor.start_all()
    up = ready.wait_until_answers(
        health_url,
        progress=lambda: (startup.lines, [c.restarts for c in supervisor.children.values()]),
        stopping=stopping,
        tick=supervisor.check,
        also=startup.all_started,
        idle=idle,
    )
    if not stopping():
        print_banner(banner, waiting=[] if up else ["web", *startup.not_started()])


def print_banner(banner: str, *, waiting: Sequence[str] = ()) -> None:
    """The credentials, set apart from the logs around them by blank lines and rules (bold on a terminal)."""
    rule = "=" * 72
    if waiting:
        state = f"Not started yet: {', '.join(dict.fromkeys(waiting))}. The log above says why."
    else:
        state = "Brain is up. Keep these: the password and the token are shown only now."
    bold, reset = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
    lines = [state, "", banner.rstrip(), "", "./brainctl credentials shows these again (without the secrets);"]
    lines.append("./brainctl credentials --reset makes a new admin password.")
    body = "\n".join(lines)
    print(f"\n\n{bold}{rule}\n{body}\n{rule}{reset}\n\n", flush=True)


def credentials(argv: Sequence[str]) -> int:
    """The first organisation's admins and tokens again; ``--reset [--user NAME]`` makes a new
    admin password, shown once."""
    env = child_env(services.ensure_services())
    port = os.environ.get("BRAIN_PORT", "8000")
    host = os.environ.get("BRAIN_HOST", "127.0.0.1")
    return manage(["credentials", "--base-url", base_url(host, port), *argv], env, check=False)


def operate(command: str, argv: Sequence[str]) -> int:
    """``backup``, ``restore`` and ``upgrade``: the management command of that name on the embedded
    services (or those DATABASE_URL names), with the paths given read from where brainctl was called."""
    caller = os.environ.get("BRAIN_CALLER_DIR") or os.getcwd()
    env = child_env(services.ensure_services())
    return manage([command, *caller_paths(argv, caller)], env, check=False)


def caller_paths(argv: Sequence[str], caller: str) -> list[str]:
    """Arguments that are paths (any but options and their names) made absolute from ``caller``."""
    out: list[str] = []
    for arg in argv:
        if arg.startswith("-") and "=" not in arg:
            out.append(arg)
        elif arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            out.append(f"{name}={os.path.join(caller, value)}")
        else:
            out.append(os.path.join(caller, arg))
    return out


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
    # Tests use their own Redis database so a running Brain keeps its queues; parallel workers take
    # the ones after it (conftest.py).
    env["REDIS_URL"] = env.get("REDIS_URL", os.environ.get("REDIS_URL", "")).rsplit("/", 1)[0] + "/9"
    env["BRAIN_TESTING"] = "1"
    if argv:  # a focused run: only the tests that were named, in one process unless they say -n
        return _step("pytest", [PYTHON, "-m", "pytest", *argv], env)
    try:
        workers = test_workers()
    except ImproperlyConfigured as error:
        print(f"brainctl: {error}", file=sys.stderr, flush=True)
        return 2
    for name, cmd in LINTS:
        if code := _step(name, cmd, env):
            return code
    return _run_pytest(env, workers)


LINTS = [
    ("ruff check", [PYTHON, "-m", "ruff", "check", "."]),
    ("ruff format", [PYTHON, "-m", "ruff", "format", "--check", "."]),
    ("mypy", [PYTHON, "-m", "mypy"]),
]
# pytest's exit status when it collected no test.
NO_TESTS = 5
# Each parallel worker takes a Redis database after the tests' one (9): up to 6 fit in Redis's 16.
MOST_TEST_WORKERS = 6


def test_workers() -> int:
    """BRAIN_TEST_WORKERS: pytest processes for the parallel phase; by default the machine's cores,
    at least 2 and at most 4. 1 runs every test in one process, one after another."""
    from brain.infra.env import env_int  # only here: the brain package sets up Celery when it is imported

    default = min(4, max(2, os.cpu_count() or 1))
    return env_int("BRAIN_TEST_WORKERS", default, minimum=1, maximum=MOST_TEST_WORKERS)


def _run_pytest(env: dict[str, str], workers: int) -> int:
    """The whole suite: with one worker, as one process; else the tests that may share the machine
    on ``workers`` processes (a file's tests stay together, so its module fixtures are built once),
    then the ``serial`` ones alone. A phase that collects nothing fails only if the other did too."""
    if workers == 1:
        return _step("pytest", [PYTHON, "-m", "pytest"], env)
    parallel = [PYTHON, "-m", "pytest", "-m", "not serial", "-n", str(workers), "--dist", "loadfile"]
    counts: Counter[str] = Counter()
    # The serial phase reuses the first worker's test database (pytest-django names it with the
    # worker's id) rather than migrating one more from nothing.
    alone = {**env, "BRAIN_TEST_DB_NAME": env.get("BRAIN_TEST_DB_NAME", "test_brain") + "_gw0"}
    codes = [
        _step(f"pytest on {workers} workers", parallel, env, counts),
        _step("pytest, the tests that run alone", [PYTHON, "-m", "pytest", "-m", "serial"], alone, counts),
    ]
    # Both phases in pytest's words, last, so that whoever reads the end of the log reads the whole run.
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    print(f"total: {counts['passed']} passed, {counts['failed'] + counts['error']} failed{skipped}", flush=True)
    return overall_status(codes)


def overall_status(codes: Sequence[int]) -> int:
    """The first failing phase's status; a phase that collected no test counts only if none ran any."""
    ran = [code for code in codes if code != NO_TESTS]
    return next((code for code in ran if code), 0) if ran else NO_TESTS


# The counts on pytest's closing line: "2 failed, 2270 passed, 12 skipped, 1 error in 901.50s".
SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|errors?)\b")


def _step(name: str, cmd: Sequence[str], env: dict[str, str], counts: Counter[str] | None = None) -> int:
    """Run one step, its output passed through line by line; ``counts`` adds up pytest's closing line."""
    print(f"==> {name}", flush=True)
    last = b""
    unbuffered = {**env, "PYTHONUNBUFFERED": "1"}  # through a pipe, the lines still come as they are written
    with subprocess.Popen(
        cmd, env=unbuffered, cwd=services.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    ) as p:
        for line in p.stdout or ():
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
            last = line if line.strip() else last
    if counts is not None:
        for number, word in SUMMARY.findall(last.decode(errors="replace")):
            counts["error" if word.startswith("error") else word] += int(number)
    if p.returncode != 0:
        print(f"==> {name} failed with status {p.returncode}", flush=True)
    return p.returncode


def main() -> int:
    if len(sys.argv) < 2:
        print(
            "usage: python -m launcher run|test|stop|credentials|services|manage|backup|restore|upgrade ...",
            file=sys.stderr,
        )
        return 2
    command, argv = sys.argv[1], sys.argv[2:]
    if command == "run":
        return run(argv)
    if command == "test":
        return test(argv)
    if command == "stop":
        return stop()
    if command == "credentials":
        return credentials(argv)
    if command == "services":
        for key, value in services.ensure_services().items():
            print(f"{key}={value}")
        return 0
    if command == "manage":
        env = child_env(services.ensure_services())
        return manage(argv, env, check=False)
    if command in ("backup", "restore", "upgrade"):
        return operate(command, argv)
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
