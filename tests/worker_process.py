"""A real Celery worker on the test database and Redis, for tests that need one in another process.

The worker runs in a process group of its own, so a test can kill it and its pool's children at
once (``os.killpg``), as the machine would on an out-of-memory kill or a power cut. It is started
with the test process's ``SECRET_KEY``, so it reads what the tests sealed (connection credentials),
and with whatever else the test adds (the address of a stand-in it must reach).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.db import connection

from launcher.processes import QUEUES, quiet_with_json_logs
from tests.progress import log_size, wait_while_progressing

ROOT = Path(__file__).resolve().parent.parent


def start_worker(
    data_dir: Path,
    *,
    queues: Sequence[str] = QUEUES,
    concurrency: int = 1,
    env: dict[str, str] | None = None,
    log_name: str = "worker.log",
    name: str = "test",
) -> subprocess.Popen[bytes]:
    """Start a worker on ``queues`` and return once it answers a ping; its log is ``data_dir/log_name``.
    A worker started again under the same ``name`` takes back at once what it held when it died;
    one of another name takes it once the claim's lease has passed."""
    db = connection.settings_dict
    environment = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(data_dir),
        SECRET_KEY=settings.SECRET_KEY,
        **(env or {}),
    )
    path = data_dir / log_name
    with path.open("w") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "brain",
                *quiet_with_json_logs(environment),
                "worker",
                "-Q",
                ",".join(queues),
                "-c",
                str(concurrency),
                "--pool",
                "prefork",
                "-l",
                "info",
                "-n",
                f"{name}-{os.getpid()}@%h",
            ],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    from brain.celery import app

    def answers() -> bool:
        assert proc.poll() is None, path.read_text()
        return bool(app.control.broadcast("ping", reply=True, timeout=0.5, limit=1))

    wait_while_progressing(answers, log_size(path), what="the worker to answer a ping", details=path.read_text)
    return proc


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """Stop a worker warmly; kill its group when it does not stop in time."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        kill_worker(proc)


def kill_worker(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker and its pool's children at once: nothing of it runs a line more."""
    os.killpg(proc.pid, signal.SIGKILL)  # its own group (start_new_session), still reserved: not reaped yet
    proc.wait()
