"""The image's entry point run for real, as compose.yaml runs it: the web part answers /readyz and
stops on SIGTERM, and a worker answers the health check that pings it by its name."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.db import connection

from launcher.entrypoint import probe
from tests.conftest import free_port
from tests.progress import log_size, wait_while_progressing

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent


def entrypoint_env(tmp_path: Path) -> dict[str, str]:
    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(tmp_path),
        SECRET_KEY="entry-point-test",
    )
    return env


def start(args: list[str], tmp_path: Path, log_name: str) -> subprocess.Popen[bytes]:
    log = (tmp_path / log_name).open("w")
    return subprocess.Popen(
        [sys.executable, "-m", "launcher.entrypoint", *args],
        cwd=ROOT,
        env=entrypoint_env(tmp_path),
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(10)


def test_the_web_part_becomes_uvicorn_answers_readyz_and_stops_on_sigterm(tmp_path):
    port = free_port()
    proc = start(["web", "--host", "127.0.0.1", "--port", str(port)], tmp_path, "web.log")
    try:
        log = tmp_path / "web.log"

        def answers() -> bool:
            assert proc.poll() is None, log.read_text()
            return probe(f"http://127.0.0.1:{port}/readyz", timeout=2) == 0

        wait_while_progressing(answers, log_size(log), what="readyz to answer", poll=0.5, details=log.read_text)
        assert "uvicorn" in psutil.Process(proc.pid).cmdline()  # the entry point gave its process over
        assert probe(f"http://127.0.0.1:{port}/no-such-page") == 1
        proc.send_signal(signal.SIGTERM)
        # uvicorn shuts down, then ends with the signal it was sent, as a container stop expects.
        assert proc.wait(30) in (0, -signal.SIGTERM)
        assert "Finished server process" in (tmp_path / "web.log").read_text()
        assert probe(f"http://127.0.0.1:{port}/readyz", timeout=2) == 1
    finally:
        stop(proc)


def test_a_worker_answers_the_ping_of_its_health_check_and_another_name_does_not(tmp_path):
    name = f"entry-{os.getpid()}@%h"
    proc = start(["worker", "--queues", "celery", "--concurrency", "1", "--name", name], tmp_path, "worker.log")
    env = entrypoint_env(tmp_path)
    ping = [sys.executable, "-m", "launcher.entrypoint", "ping"]
    try:
        log = tmp_path / "worker.log"

        def answers() -> bool:
            assert proc.poll() is None, log.read_text()
            return subprocess.run([*ping, "--name", name], cwd=ROOT, env=env, capture_output=True).returncode == 0

        wait_while_progressing(answers, log_size(log), what="the worker to answer its ping", details=log.read_text)
        other = subprocess.run([*ping, "--name", f"nobody-{os.getpid()}@%h"], cwd=ROOT, env=env, capture_output=True)
        assert other.returncode != 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        stop(proc)
