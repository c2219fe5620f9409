"""Background work is queued by task name, from any process."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import redis
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
SEND = (
    "import sys, django; django.setup()\n"
    "from brain.queueing import send_now\n"
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
