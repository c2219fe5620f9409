"""The run command itself: it starts web, worker and beat, answers health over MCP, and stops cleanly."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import call, free_port

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
        token = None
        deadline = time.monotonic() + 90
        while token is None and time.monotonic() < deadline:
            found = re.search(r"Token:\s+(brn_\S+)", "".join(lines))
            token = found.group(1) if found else None
            time.sleep(0.2)
        assert token, "".join(lines)
        assert f"MCP URL:      http://127.0.0.1:{port}/mcp" in "".join(lines)
        assert f"Brain:        http://127.0.0.1:{port}/" in "".join(lines)

        health = None
        while time.monotonic() < deadline:
            try:
                health = call(f"http://127.0.0.1:{port}", token, "health").structured_content
            except Exception:
                health = None
            if health and health["status"] == "ok":
                break
            time.sleep(1)
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
