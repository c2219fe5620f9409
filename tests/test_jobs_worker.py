"""Jobs with a real Celery worker and two real beats: a one-off created for the next minute runs once
and its report lands in the chat, a paused one and a deleted one do not run; run_now runs on top
of the schedule."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from brain.models import Features
from conftest import make_org, make_token
from jobs.models import Message, Run
from tests.conftest import call
from tests.progress import IDLE_SECONDS, wait_while_progressing
from tests.test_worker_e2e import worker  # noqa: F401 (the worker fixture)
from tests.worker_process import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


def start_beat(tmp_path, name: str) -> subprocess.Popen[bytes]:
    db = connection.settings_dict
    env = dict(
        os.environ,
        DATABASE_URL=f"postgresql://{db['USER']}@{db['HOST'].replace('/', '%2F')}/{db['NAME']}",
        REDIS_URL=settings.REDIS_URL,
        BRAIN_DATA_DIR=str(tmp_path),
    )
    log = (tmp_path / f"{name}.log").open("w")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "brain",
            "beat",
            "-l",
            "info",
            "--max-interval",
            "5",
            "-s",
            str(tmp_path / f"{name}-schedule"),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def wait_for(done) -> bool:
    """Wait while the worker moves runs of any organisation (tests.progress)."""
    every_run = lambda: sorted(Run.objects.values_list("pk", "status"))  # noqa: E731
    wait_while_progressing(done, every_run, what="the worker's runs")
    return True


def runs_of(org):
    """Progress of jobs: the organisation's runs and their states (the beats' logs grow all the time)."""
    return lambda: sorted(Run.objects.filter(chat__org=org).values_list("pk", "status"))


@pytest.fixture
def beats(tmp_path, worker):  # noqa: F811 (the fixture above)
    """Two beats at once, as a careless deployment would run them."""
    procs = [start_beat(tmp_path, "beat-1"), start_beat(tmp_path, "beat-2")]
    yield procs
    for proc in procs:
        proc.terminate()
        proc.wait(20)


def test_a_job_for_the_next_minute_runs_once_under_two_beats_and_paused_or_deleted_ones_do_not(
    brain_url, beats, tmp_path
):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    token = make_token(org).plaintext
    # The start of a minute at least 20 s away, so the calls below never reach it first.
    soon = (timezone.now() + timedelta(seconds=80)).replace(second=0, microsecond=0)
    ids = {}
    for name in ("Chase", "Paused", "Deleted"):
        made = call(
            brain_url,
            token,
            "schedule_once",
            {"name": name, "prompt": "What do we know about Baltic?", "at": soon.strftime("%Y-%m-%dT%H:%M")},
        )
        assert not made.is_error, made.content[0].text
        ids[name] = made.structured_content["job"]["id"]
    call(brain_url, token, "update_job", {"id": ids["Paused"], "enabled": False})
    call(brain_url, token, "update_job", {"id": ids["Deleted"], "delete": True})
    # Nothing moves until the minute comes: the wait allows that minute on top of the idle interval.
    wait_while_progressing(
        lambda: Run.objects.filter(chat__org=org, status="ok").exists(),
        runs_of(org),
        what="the job to run",
        idle=IDLE_SECONDS + 120,
        details=lambda: (tmp_path / "beat-1.log").read_text()[-3000:],
    )
    time.sleep(12)  # both beats have woken up more than once since
    [run] = Run.objects.filter(chat__org=org)
    assert (run.scheduled_for, run.chat.title) == (soon, "Chase")
    assert Message.objects.filter(chat=run.chat, role="report", run=run).exists()


def test_run_now_runs_on_top_of_the_schedule(brain_url, worker):  # noqa: F811
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    token = make_token(org).plaintext
    job = call(
        brain_url, token, "schedule_job", {"name": "Weekly", "prompt": "What changed?", "schedule": "0 9 * * 1"}
    ).structured_content["job"]
    queued = call(brain_url, token, "update_job", {"id": job["id"], "run_now": True})
    assert "queued within the next minute" in queued.structured_content["message"]
    wait_while_progressing(
        lambda: Run.objects.filter(chat__org=org, status="ok").count() == 1, runs_of(org), what="the job to run"
    )
    listed = call(brain_url, token, "list_jobs", {}).structured_content["jobs"][0]
    assert listed["last_status"] == "ok"


def test_a_run_asked_for_while_the_broker_is_away_is_kept_and_the_sweep_runs_it(brain_url, worker, monkeypatch):  # noqa: F811
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    token = make_token(org).plaintext
    job = call(
        brain_url, token, "schedule_job", {"name": "Weekly", "prompt": "What changed?", "schedule": "0 9 * * 1"}
    ).structured_content["job"]

    def down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", down)  # the web process cannot reach the broker
    queued = call(brain_url, token, "update_job", {"id": job["id"], "run_now": True})
    assert "queued within the next minute" in queued.structured_content["message"]
    [run] = Run.objects.filter(chat__org=org)
    assert run.status == "queued"  # kept, though its message was lost
    monkeypatch.undo()  # the broker is back
    from jobs.tasks import sweep_jobs_task

    sweep_jobs_task(grace_seconds=0)  # what beat sends every minute
    assert wait_for(lambda: Run.objects.filter(chat__org=org, status="ok").count() == 1)
    assert Run.objects.filter(chat__org=org).count() == 1


def test_a_due_job_waits_in_the_worker_while_jobs_are_switched_off_and_runs_once_they_are_on(worker):  # noqa: F811
    from celery import current_app

    from conftest import make_actor
    from jobs.models import Job
    from jobs.services import schedule_job, schedule_once
    from jobs.tasks import sweep_jobs_task

    org, other = make_org(), make_org()
    Features.objects.filter(org__in=[org, other]).update(jobs=True)
    job = schedule_once(
        actor=make_actor(org), name="Remind me", prompt="Chase the Baltic invoice", at="2031-01-09T09:00"
    ).job
    came = timezone.now() - timedelta(minutes=5)
    Job.objects.filter(pk=job.pk).update(at=came, next_run_at=came)
    Features.objects.filter(org=org).update(jobs=False)
    marker = schedule_job(actor=make_actor(other), name="Marker", prompt="p", schedule="0 9 * * 1").job
    later = Run.objects.create(chat=marker.chat, job=marker, scheduled_for=came, status="queued")
    current_app.send_task("jobs.tasks.tick_task", args=[job.pk])  # what beat sends at the moment
    current_app.send_task("jobs.tasks.run_task", args=[later.pk])  # behind it on the jobs queue
    assert wait_for(lambda: Run.objects.filter(pk=later.pk, status="ok").exists())
    assert not Run.objects.filter(chat=job.chat).exists()  # the tick came first and ran nothing
    assert Job.objects.filter(pk=job.pk).exists()
    Features.objects.filter(org=org).update(jobs=True)
    sweep_jobs_task(grace_seconds=0)  # what beat sends every minute
    assert wait_for(lambda: Run.objects.filter(chat=job.chat, status="ok").exists())
    assert Run.objects.filter(chat=job.chat).count() == 1
    assert not Job.objects.filter(pk=job.pk).exists()
