"""Faults against Brain as ./brainctl run starts it: the launcher with its web, worker and beat.

Redis is stopped and started again while documents are being saved and ingested, and the worker
is killed outright; nothing saved may be lost, the web must keep serving, and ingestion must
resume once the broker or the worker is back (each wait lasts as long as something moves).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import redis
from django.conf import settings
from django.db import connection

from conftest import make_org, make_token
from launcher import services
from launcher.processes import BULK_WORKER_NAME, WORKER_NAME
from memory.limits import BULK_CHARS
from memory.models import Document
from tests.conftest import call, free_port
from tests.progress import documents_progress, log_size, wait_while_progressing

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parent.parent
BIG = "\n\n".join(f"Paragraph {i}: " + "the quarterly plan covers hiring and budgets. " * 18 for i in range(150))


@dataclass
class Brain:
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def child(self, name: str) -> psutil.Process:
        marker = {"web": "uvicorn", "worker": WORKER_NAME, "worker-bulk": BULK_WORKER_NAME, "beat": "beat"}[name]
        for child in psutil.Process(self.process.pid).children():
            if marker in child.cmdline():
                return child
        raise AssertionError(f"no {name} process under the launcher:\n{self.output()[-3000:]}")


def wait_for(predicate: Callable[[], bool], progress: Callable[[], Any], what: str) -> float:
    """Wait until ``predicate()`` holds, as long as ``progress()`` moves; returns how long it took."""
    started = time.monotonic()
    wait_while_progressing(predicate, progress, what=what)
    return time.monotonic() - started


def moving(org, brain: Brain) -> Callable[[], Any]:
    """Progress of the organisation's documents, and of the launcher's log (a worker reconnecting)."""
    documents, log = documents_progress(Document.objects.filter(org=org)), log_size(brain.log)
    return lambda: (documents(), log())


def embedded_redis_port() -> int:
    port = services.read_env_file().get("BRAIN_REDIS_PORT")
    if not port or f":{port}/" not in settings.REDIS_URL or services._redis_pid() is None:
        pytest.skip("these tests stop and start the embedded Redis; the tests run on another one")
    return int(port)


@pytest.fixture(scope="module")
def brain(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Brain]:
    embedded_redis_port()
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    db = connection.settings_dict
    port = free_port()
    workdir = tmp_path_factory.mktemp("brain-run")
    env = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(workdir),
        BRAIN_PORT=str(port),
        BRAIN_KEEP_SERVICES="1",
        BRAIN_EXTRACT_FACTS="0",
        BRAIN_SWEEP_INTERVAL_SECONDS="5",
        BRAIN_QUEUED_GRACE_SECONDS="10",
        BRAIN_RESTART_DELAY_SECONDS="0.5",
    )
    log = workdir / "brain.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "launcher", "run", "--quiet"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    running = Brain(process, f"http://127.0.0.1:{port}", log)
    try:
        started = log_size(log)
        wait_for(lambda: _answers(running.url) or process.poll() is not None, started, "the web answering")
        wait_for(lambda: "ready." in running.output() or process.poll() is not None, started, "the worker being ready")
        assert process.poll() is None, running.output()[-5000:]
        yield running
    finally:
        # The launcher's children run in their own sessions: stop any it leaves behind, so a failed
        # run never leaves a worker consuming the next tests' queue.
        family = psutil.Process(process.pid).children(recursive=True) if process.poll() is None else []
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(40)
        except subprocess.TimeoutExpired:
            process.kill()
        for leftover in family:
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        if services._redis_pid() is None:
            services.start_redis()


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/login/", timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def save(brain: Brain, token: str, title: str, content: str) -> None:
    result = call(brain.url, token, "add_company_knowledge", {"title": title, "content": content})
    assert not result.is_error, result.content


def statuses(org) -> list[str]:
    return list(Document.objects.filter(org=org).values_list("status", flat=True))


def test_redis_stopped_and_started_during_saves_loses_nothing_and_ingestion_resumes(brain):
    org = make_org()
    token = make_token(org).plaintext
    save(brain, token, "Handbook", BIG)
    wait_for(lambda: "processing" in statuses(org), moving(org, brain), "the handbook being ingested")

    services.stop_redis()  # with the handbook in flight, which is what crashed Celery 5.7.0's worker
    try:
        for n in range(3):
            save(brain, token, f"Note {n}", f"Saved while the broker was away, number {n}.")
        hits = call(brain.url, token, "search_company_memory", {"query": "quarterly plan"})
        assert not hits.is_error, hits.content
        time.sleep(3)
    finally:
        services.start_redis()

    took = wait_for(lambda: statuses(org).count("ready") == 4, moving(org, brain), "every document being ready")
    print(f"ingestion resumed {took:.1f} s after Redis came back")
    assert Document.objects.filter(org=org).count() == 4
    assert brain.process.poll() is None
    assert "worker exited" not in brain.output(), brain.output()[-5000:]  # the worker waited for the broker


def test_a_killed_worker_is_started_again_and_takes_back_its_document_while_the_web_serves(brain):
    org = make_org()
    token = make_token(org).plaintext
    save(brain, token, "Handbook", BIG)
    wait_for(lambda: "processing" in statuses(org), moving(org, brain), "the handbook being ingested")

    assert len(BIG) > BULK_CHARS  # so the bulk lane's worker holds it
    worker = brain.child("worker-bulk")
    os.killpg(worker.pid, signal.SIGKILL)  # the whole worker, pool and all, as the OOM killer would
    hits = call(brain.url, token, "search_company_memory", {"query": "quarterly plan"})
    assert not hits.is_error, hits.content  # reads go on while the worker is gone
    save(brain, token, "Note", "Saved while the worker was down.")

    wait_for(lambda: "worker-bulk started again" in brain.output(), log_size(brain.log), "the worker started again")
    assert brain.child("worker-bulk").pid != worker.pid
    took = wait_for(lambda: statuses(org).count("ready") == 2, moving(org, brain), "both documents being ready")
    print(f"ingestion resumed {took:.1f} s after the worker was started again")
    assert Document.objects.get(org=org, title="Handbook").attempts == 2
