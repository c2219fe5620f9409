"""The container image's entry point: one of Brain's processes, or a set-up step, per container.

    python -m launcher.entrypoint web [--host H] [--port P] [--no-access-log]
    python -m launcher.entrypoint worker [--queues ingest,dispatch] [--concurrency N] [--name N]
    python -m launcher.entrypoint beat
    python -m launcher.entrypoint migrate
    python -m launcher.entrypoint bootstrap [bootstrap's options]
    python -m launcher.entrypoint manage COMMAND [ARGS...]
    python -m launcher.entrypoint probe URL       (health checks: 0 when URL answers 2xx)
    python -m launcher.entrypoint ping [--name N] (health checks: 0 when this worker answers)

The commands come from ``launcher.processes``, the ones ``./brainctl run`` starts. The chosen
command replaces this process, so it receives the container's signals itself (SIGTERM: uvicorn
finishes its requests, a worker its tasks).
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence

from launcher import processes
from launcher.services import ROOT


def _queues(value: str) -> list[str]:
    queues = [part.strip() for part in value.split(",") if part.strip()]
    try:
        processes.check_queues(queues)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return queues


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m launcher.entrypoint", description="Run one part of Brain.")
    roles = top.add_subparsers(dest="role", required=True)
    web = roles.add_parser("web", help="the ASGI server: pages, REST, /mcp, probes")
    web.add_argument("--host", default="0.0.0.0")  # noqa: S104 (a container listens on its own address)
    web.add_argument("--port", type=int, default=8000)
    web.add_argument("--no-access-log", dest="access_log", action="store_false")
    worker = roles.add_parser("worker", help="a Celery worker on some queues")
    worker.add_argument("--queues", type=_queues, default=list(processes.QUEUES))
    worker.add_argument("--concurrency", type=int, default=2)
    worker.add_argument("--name", default=processes.WORKER_NAME)
    roles.add_parser("beat", help="Celery beat (run exactly one)")
    roles.add_parser("migrate", help="apply database migrations")
    roles.add_parser("bootstrap", help="a first organisation, admin and token", add_help=False)
    roles.add_parser("manage", help="any manage.py command", add_help=False)
    probe = roles.add_parser("probe", help="exit 0 when the URL answers 2xx")
    probe.add_argument("url")
    probe.add_argument("--timeout", type=float, default=5.0)
    ping = roles.add_parser("ping", help="exit 0 when this container's worker answers")
    ping.add_argument("--name", default=processes.WORKER_NAME)
    return top


def command_for(argv: Sequence[str]) -> list[str]:
    """The command line a role runs (for every role but ``probe``, which runs in this process)."""
    args, rest = parser().parse_known_args(argv)
    if rest and args.role not in ("bootstrap", "manage"):
        parser().error(f"unrecognised arguments: {' '.join(rest)}")
    if args.role == "web":
        return processes.web_command(host=args.host, port=args.port, access_log=args.access_log)
    if args.role == "worker":
        return processes.worker_command(queues=args.queues, concurrency=args.concurrency, name=args.name)
    if args.role == "beat":
        return processes.beat_command()
    if args.role == "migrate":
        return processes.manage_command(processes.MIGRATE)
    if args.role == "bootstrap":
        return processes.manage_command(["bootstrap", *rest])
    if args.role == "manage":
        return processes.manage_command(rest)
    if args.role == "ping":
        return processes.ping_command(name=args.name)
    raise ValueError(f"{args.role} runs in this process")


def probe(url: str, timeout: float = 5.0) -> int:
    """0 when ``url`` answers with a 2xx status, else 1 (refused, timed out, 4xx or 5xx)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (a fixed probe URL)
            print(f"{url}: {response.status}")
            return 0 if 200 <= response.status < 300 else 1
    except urllib.error.HTTPError as exc:
        print(f"{url}: {exc.code}")
    except (urllib.error.URLError, OSError) as exc:
        print(f"{url}: {exc}")
    return 1


def main(argv: Sequence[str]) -> int:
    args, _ = parser().parse_known_args(argv)
    if args.role == "probe":
        return probe(args.url, args.timeout)
    command = command_for(argv)
    for key, value in processes.PROCESS_ENV.items():
        os.environ.setdefault(key, value)
    os.chdir(ROOT)
    os.execv(command[0], command)  # noqa: S606 (a fixed command from launcher.processes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
