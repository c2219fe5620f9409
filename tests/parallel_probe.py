"""Run by tests/test_parallel.py on two xdist workers (not collected with the suite): each worker
writes which Redis its environment, its settings and its Celery app name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings

from brain.celery import app

pytestmark = pytest.mark.unit


def test_write_the_redis_this_worker_reads() -> None:
    seen = [os.environ["REDIS_URL"], settings.REDIS_URL, app.conf.broker_url]
    worker = os.environ["PYTEST_XDIST_WORKER"]
    (Path(os.environ["BRAIN_PROBE_DIR"]) / worker).write_text("\n".join(seen))
