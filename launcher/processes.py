"""The commands of Brain's processes, written once.

``./brainctl run`` starts the web server, one worker on every queue and beat side by side from
these; the container image's entry point (``launcher.entrypoint``) runs one of them per
container; tests/test_deploy_files.py checks compose.yaml against them.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence

# Every queue a task is routed to (settings.CELERY_TASK_ROUTES and the default queue); a test
# keeps the two in step.
QUEUES = ("celery", "ingest", "ingest_bulk", "dispatch", "jobs", "nightly")
# Long documents and large files are ingested in a lane of their own (memory.documents.lanes),
# served by a worker of its own, so they never hold the children that short documents pass through.
BULK_QUEUES = ("ingest_bulk",)
BULK_WORKER_NAME = "brain-bulk@%h"
PYTHON = sys.executable
SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
ASGI_APP = "brain.asgi:application"
# uvicorn's C HTTP parser, with bounds on heads, trailers, time and connections that uvicorn lacks
# (launcher.http), and the libuv event loop (requirements.txt). Named rather than left to
# uvicorn's "auto", so that a missing package stops the web server instead of slowing every call.
# Measured over five alternating rounds (docs/benchmarks-log.md): get_profile's p50 over MCP 4.0 to
# 6.9 ms (median 6.3) with h11 and asyncio, 4.1 to 4.9 (median 4.6) with these.
HTTP_PARSER, EVENT_LOOP = "launcher.http:HttpToolsProtocol", "uvloop"
# %h is the host name: unique per host or container, and the same after a restart there, so a
# restarted worker takes back the documents it held at once (memory.tasks.recover_worker_task).
WORKER_NAME = "brain@%h"
# What every process of Brain runs with unless the environment says otherwise.
PROCESS_ENV = {"DJANGO_SETTINGS_MODULE": "brain.settings", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def web_command(*, host: str, port: int, access_log: bool = True) -> list[str]:
    """The ASGI server: pages, the REST API, /mcp and the probes."""
    log = "--access-log" if access_log else "--no-access-log"
    server = ["--http", HTTP_PARSER, "--loop", EVENT_LOOP]
    return [PYTHON, "-m", "uvicorn", ASGI_APP, "--host", host, "--port", str(port), *server, log]


def quiet_with_json_logs(env: Mapping[str, str] | None = None) -> list[str]:
    """Celery's ``--quiet`` when every line must be JSON (BRAIN_LOG_FORMAT=json): the worker's and
    beat's banners are printed, not logged; what they say is in the logged lines that follow."""
    value = (os.environ if env is None else env).get("BRAIN_LOG_FORMAT", "")
    return ["--quiet"] if value.strip().lower() == "json" else []


def worker_command(*, queues: Sequence[str] = QUEUES, concurrency: int = 2, name: str = WORKER_NAME) -> list[str]:
    """A Celery worker on ``queues``. ``name`` must be unique among running workers and, for a
    restarted worker to take back its documents at once, the same after a restart."""
    check_queues(queues)
    celery = [PYTHON, "-m", "celery", "-A", "brain", *quiet_with_json_logs(), "worker", "-l", "info"]
    return [*celery, "--concurrency", str(concurrency), "-Q", ",".join(queues), "-n", name]


def check_queues(queues: Sequence[str]) -> None:
    """Raise ValueError unless ``queues`` names at least one queue, and only known ones."""
    if not queues or set(queues) - set(QUEUES):
        raise ValueError(f"queues must be some of {','.join(QUEUES)}; got {','.join(queues) or 'none'}")


def ping_command(*, name: str = WORKER_NAME) -> list[str]:
    """Exits 0 when the worker of that name, on this host, answers a ping through the broker."""
    node = name.replace("%h", socket.gethostname())
    return [PYTHON, "-m", "celery", "-A", "brain", "inspect", "ping", "-d", node, "--timeout", "5"]


def beat_command() -> list[str]:
    """Celery beat with the schedule kept in the database (jobs and nightly runs add entries)."""
    quiet = quiet_with_json_logs()
    return [PYTHON, "-m", "celery", "-A", "brain", *quiet, "beat", "-l", "info", "--scheduler", SCHEDULER]


def local_commands(*, host: str, port: int, access_log: bool = True) -> dict[str, list[str]]:
    """What ``./brainctl run`` starts side by side: the web server, one worker on every queue but
    the bulk lane, one on the bulk lane, and beat."""
    return {
        "web": web_command(host=host, port=port, access_log=access_log),
        "worker": worker_command(queues=[q for q in QUEUES if q not in BULK_QUEUES]),
        "worker-bulk": worker_command(queues=BULK_QUEUES, concurrency=1, name=BULK_WORKER_NAME),
        "beat": beat_command(),
    }


def manage_command(args: Sequence[str]) -> list[str]:
    return [PYTHON, "manage.py", *args]


MIGRATE = ["migrate", "--no-input", "-v", "0"]
COLLECTSTATIC = ["collectstatic", "--no-input", "-v", "0"]


def bootstrap_args(base_url: str) -> list[str]:
    """A first organisation, its admin and a token, printed once (safe to run again)."""
    return ["bootstrap", "--base-url", base_url]
