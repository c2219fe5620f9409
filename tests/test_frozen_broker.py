"""A save never waits on the broker: Redis frozen (SIGSTOP) while knowledge is added over MCP.

A frozen Redis accepts connections and never answers, so a client without timeouts waits for as
long as it stays frozen. The save answers at once, its message waits in the outbox, and once Redis
is thawed (SIGCONT) the outbox's sweep sends it and the worker ingests the document.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest
import redis
from celery import current_app
from django.conf import settings

from brain.models import OutboxMessage
from conftest import make_org, make_token
from launcher import services
from memory.models import Document
from tests.conftest import call
from tests.progress import documents_progress, wait_while_progressing
from tests.worker_process import start_worker, stop_worker

pytestmark = pytest.mark.django_db(transaction=True)
ANSWER_WITHIN = 10  # seconds: a generous bound for a loaded machine; the save itself takes well under 2 s


def embedded_redis_pid() -> int:
    port = services.read_env_file().get("BRAIN_REDIS_PORT")
    pid = services._redis_pid()
    if not port or f":{port}/" not in settings.REDIS_URL or pid is None:
        pytest.skip("this test freezes the embedded Redis; the tests run on another one")
    return pid


def test_a_save_answers_while_the_broker_is_frozen_and_is_ingested_once_it_thaws(brain_url, tmp_path):
    pid = embedded_redis_pid()
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    worker = start_worker(tmp_path)
    org = make_org()
    token = make_token(org).plaintext
    answer: dict[str, Any] = {}
    args = {"title": "Parking", "content": "Level -2 of the garage is ours."}
    saving = threading.Thread(
        target=lambda: answer.update(result=call(brain_url, token, "add_company_knowledge", args))
    )
    try:
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            saving.start()
            saving.join(ANSWER_WITHIN)
            took = time.monotonic() - started
            assert not saving.is_alive(), (
                f"add_company_knowledge did not answer in {ANSWER_WITHIN} s, the broker frozen"
            )
            print(f"add_company_knowledge answered in {took:.2f} s with the broker frozen")
            assert not answer["result"].is_error, answer["result"].content
            document = Document.objects.get(org=org)  # committed, and its message kept
            assert OutboxMessage.objects.filter(row_id=document.pk, task="memory.tasks.ingest_document_task").exists()
        finally:
            os.kill(pid, signal.SIGCONT)
        saving.join(60)
        current_app.send_task("brain.tasks.send_outbox_task", kwargs={"settled_seconds": 0})  # what beat sends
        wait_while_progressing(
            lambda: Document.objects.get(pk=document.pk).status == "ready",
            documents_progress(Document.objects.filter(org=org)),
            what="the document saved while the broker was frozen to be ingested",
        )
        assert Document.objects.get(pk=document.pk).attempts == 1
        assert not OutboxMessage.objects.filter(row_id=document.pk).exists()
    finally:
        os.kill(pid, signal.SIGCONT)
        stop_worker(worker)
