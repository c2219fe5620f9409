"""The run command itself: it starts web, worker and beat, answers health over MCP, and stops cleanly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import call, free_port
from tests.progress import wait_while_progressing

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent


def test_run_starts_everything_answers_health_and_stops_on_ctrl_c(tmp_path):
    db = connection.settings_dict
    database_url = f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}"
    port = free_port()
    env = dict(
        os.environ,
        DATABASE_URL=database_url,
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(tmp_path),
        BRAIN_PORT=str(port),
        BRAIN_BASE_URL=f"http://127.0.0.1:{port}",
    )
    env.pop("BRAIN_TESTING", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "launcher", "run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    stream = proc.stdout
    assert stream is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True)
    reader.start()
    try:
        said = lambda: "".join(lines)  # noqa: E731
        printed = lambda: len(lines)  # noqa: E731 - the processes print as they start: that is progress
        wait_while_progressing(lambda: "Token:" in said(), printed, what="the token to be printed", details=said)
        found = re.search(r"Token:\s+(brn_\S+)", said())
        token = found.group(1) if found else None
        assert token, said()
        assert f"MCP URL:      http://127.0.0.1:{port}/mcp" in "".join(lines)
        assert f"Brain:        http://127.0.0.1:{port}/" in "".join(lines)
        # The credentials come once the web answers, under the start-up logs rather than above them.
        assert "Brain is up." in said()
        assert said().index("   web |") < said().index("Token:")

        health = None

        def healthy() -> bool:
            nonlocal health
            try:
                health = call(f"http://127.0.0.1:{port}", token, "health").structured_content
            except Exception:
                health = None
            return bool(health and health["status"] == "ok")

        wait_while_progressing(healthy, lambda: (printed(), health), what="health to be ok", poll=1, details=said)
        assert health, (health, "".join(lines[-40:]))
        assert health["status"] == "ok", (health, "".join(lines[-40:]))
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3

        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        reader.join(5)
        output = "".join(lines)
        assert "brain: stopped" in output
        assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        assert "web |" in output
        assert "worker |" in output
        assert "beat |" in output
    finally:
        if proc.poll() is None:
            proc.kill()
