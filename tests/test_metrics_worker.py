"""With a real Celery worker: a request's id follows it into the task it queued (the worker's JSON log
lines show it), and the worker's task durations reach /metrics through the shared metrics folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import redis
from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from brain.infra.metrics import render
from conftest import make_org, make_token
from memory.models import Document
from tests.progress import documents_progress, wait_until, wait_while_progressing
from tests.worker_process import start_worker, stop_worker

pytestmark = pytest.mark.django_db(transaction=True)

INGEST = "memory.tasks.ingest_document_task"


@pytest.fixture
def worker(tmp_path):
    redis.Redis.from_url(settings.REDIS_URL).flushdb()  # no stale messages from earlier tests
    (tmp_path / "metrics").mkdir()
    env = {"BRAIN_LOG_FORMAT": "json", "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    proc = start_worker(tmp_path, env=env)
    yield proc
    stop_worker(proc)


def log_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for raw in path.read_text().splitlines():
        if raw.strip():
            lines.append(json.loads(raw))  # every line is one JSON object, or this fails
    return lines


def test_the_request_id_follows_a_save_into_the_worker_and_its_time_reaches_metrics(brain_url, worker, tmp_path):
    org = make_org()
    token = make_token(org).plaintext
    answer = httpx2.post(
        f"{brain_url}/api/v1/documents",
        json={"title": "Travel policy", "content": "Book trains for journeys under four hours."},
        headers={"Authorization": f"Bearer {token}", "X-Request-ID": "trace-4242"},
    )
    assert answer.status_code == 201, answer.text
    assert answer.headers["x-request-id"] == "trace-4242"
    documents = Document.objects.filter(org=org)
    wait_while_progressing(
        lambda: documents.filter(status="ready").exists(), documents_progress(documents), what="the worker"
    )

    def succeeded() -> list[dict[str, Any]]:
        return [line for line in log_lines(log) if INGEST in line["message"] and "succeeded" in line["message"]]

    log = tmp_path / "worker.log"
    wait_until(lambda: bool(succeeded()), what="the worker to log the task's end")  # just after the row is ready
    assert succeeded()[0]["request_id"] == "trace-4242"
    lines = log_lines(log)
    traced = [line for line in lines if line["request_id"] == "trace-4242"]
    assert {"time", "level", "logger", "message", "request_id", "org"} <= set(traced[0])
    assert traced[0]["org"] == org.slug
    others = [line for line in lines if line["request_id"] and line["request_id"] != "trace-4242"]
    assert all(INGEST not in line["message"] for line in others)  # the id is not left on later tasks

    families = {
        f.name: f for f in text_string_to_metric_families(render(multiproc_dir=str(tmp_path / "metrics")).decode())
    }
    counts = [
        s
        for s in families["brain_celery_task_seconds"].samples
        if s.name == "brain_celery_task_seconds_count" and s.labels == {"task": INGEST, "state": "success"}
    ]
    assert counts
    assert counts[0].value >= 1
