"""Background work is queued by task name, from any process."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from kombu.exceptions import OperationalError

from brain.infra.queueing import BROKER, send_pending
from brain.models import OutboxMessage
from memory.documents.saving import INGEST_TASK, add_document

ROOT = Path(__file__).resolve().parents[2]
SEND = (
    "import sys, django; django.setup()\n"
    "from brain.infra.queueing import send_now\n"
    "send_now('memory.tasks.ingest_document_task', 987654, what='document')\n"
    "assert 'memory.tasks' not in sys.modules, 'the task module was imported'\n"
)


def test_a_process_that_never_imported_the_task_module_queues_the_task_on_its_routed_queue():
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.delete("ingest")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "brain.settings"}
    subprocess.run([sys.executable, "-c", SEND], cwd=ROOT, env=env, check=True, timeout=60)  # noqa: S603 (our own interpreter)
    raw = broker.lpop("ingest")
    assert isinstance(raw, bytes), "nothing was queued on the ingest queue"
    message = json.loads(raw)
    assert message["headers"]["task"] == "memory.tasks.ingest_document_task"
    assert json.loads(base64.b64decode(message["body"]))[0] == [987654]


@pytest.mark.django_db
def test_a_saves_message_waits_in_the_outbox_while_the_broker_fails_and_the_sweep_sends_it(
    actor, monkeypatch, django_capture_on_commit_callbacks
):
    def frozen(*args, **kwargs):
        raise OperationalError("Timeout reading from socket")

    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", frozen)
    with django_capture_on_commit_callbacks(execute=True):
        document = add_document(actor=actor, title="Parking", content="Level -2 is ours.").document
        note = add_document(actor=actor, title="Lunch", content="Lunch is at one.").document
    kept = list(OutboxMessage.objects.values_list("task", "row_id", "queue"))
    assert kept == [(INGEST_TASK, document.pk, "ingest"), (INGEST_TASK, note.pk, "ingest")]
    assert BROKER.cooling()  # the second save did not try the broker that had just failed

    sent: list[tuple[str, list[int], str]] = []
    monkeypatch.setattr(
        "brain.infra.queueing.current_app.send_task", lambda name, args, **kw: sent.append((name, args, kw["queue"]))
    )
    assert send_pending(settled=timedelta(0)) == 2
    assert sent == [(INGEST_TASK, [document.pk], "ingest"), (INGEST_TASK, [note.pk], "ingest")]
    assert not OutboxMessage.objects.exists()


@pytest.mark.django_db
def test_a_message_sent_after_the_commit_leaves_nothing_in_the_outbox(
    actor, monkeypatch, django_capture_on_commit_callbacks
):
    sent: list[object] = []
    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", lambda name, args, **kw: sent.append(args))
    with django_capture_on_commit_callbacks(execute=True):
        document = add_document(actor=actor, title="Parking", content="Level -2 is ours.").document
        assert OutboxMessage.objects.filter(row_id=document.pk).exists()  # written with the document
    assert sent == [[document.pk]]
    assert not OutboxMessage.objects.exists()
