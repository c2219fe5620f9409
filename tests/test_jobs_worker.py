"""Jobs with a real Celery worker and a real beat: a one-off created for the next minute runs and
its report lands in the chat; run_now runs on top of the schedule."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from brain.models import Features
from conftest import make_org, make_token
from jobs.models import Message, Run
from tests.conftest import call
from tests.test_worker_e2e import ROOT, wait_for, worker  # noqa: F401 (the worker fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def beat(tmp_path, worker):  # noqa: F811 (the fixture above)
    db = connection.settings_dict
    env = dict(os.environ, DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
               REDIS_URL=settings.REDIS_URL, BRAIN_DATA_DIR=str(tmp_path))  # fmt: skip
    log = (tmp_path / "beat.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "brain", "beat", "-l", "info", "--max-interval", "5",
                             "-s", str(tmp_path / "beat-schedule")], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)  # fmt: skip
    yield proc
    proc.terminate()
    proc.wait(20)
    log.close()


def test_a_job_for_the_next_minute_runs_once_and_reports_into_its_chat(brain_url, beat, tmp_path):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    token = make_token(org).plaintext
    soon = (timezone.now() + timedelta(minutes=1)).replace(second=0, microsecond=0)
    made = call(brain_url, token, "schedule_once", {"name": "Chase", "prompt": "What do we know about Baltic?",
                                                    "at": soon.strftime("%Y-%m-%dT%H:%M")})  # fmt: skip
    assert not made.is_error, made.content[0].text
    assert wait_for(lambda: Run.objects.filter(chat__org=org, status="ok").exists(), seconds=150), (
        tmp_path / "beat.log"
    ).read_text()[-3000:]
    run = Run.objects.get(chat__org=org)
    assert run.scheduled_for == soon
    assert Message.objects.filter(chat=run.chat, role="report", run=run).exists()


def test_run_now_runs_on_top_of_the_schedule(brain_url, worker):  # noqa: F811
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    token = make_token(org).plaintext
    job = call(brain_url, token, "schedule_job", {"name": "Weekly", "prompt": "What changed?",
                                                  "schedule": "0 9 * * 1"}).structured_content["job"]  # fmt: skip
    queued = call(brain_url, token, "update_job", {"id": job["id"], "run_now": True})
    assert "queued within the next minute" in queued.structured_content["message"]
    assert wait_for(lambda: Run.objects.filter(chat__org=org, status="ok").count() == 1)
    listed = call(brain_url, token, "list_jobs", {}).structured_content["jobs"][0]
    assert listed["last_status"] == "ok"
