"""What waits is kept: nothing runs while the organisation's jobs switch is off and what was due
runs once it is back on; a run asked for by hand is saved queued, so a broker outage loses
nothing and the jobs sweep sends it again. Through the tasks beat and the sweep send."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from brain.models import Features
from conftest import make_user
from jobs.models import Job, Run
from jobs.services import schedule_job, schedule_once, update_job
from jobs.tasks import run_task, sweep_jobs_task, tick_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The messages sent to the broker, kept here instead (no worker in these tests)."""
    messages: list[tuple[str, list[object]]] = []
    monkeypatch.setattr(
        "brain.infra.queueing.current_app.send_task", lambda name, args, **kw: messages.append((name, args))
    )
    return messages


@pytest.fixture
def broker_down(monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr("brain.infra.queueing.current_app.send_task", down)


def switch(org, on: bool) -> None:
    Features.objects.filter(org=org).update(jobs=on)


def test_a_due_one_off_waits_while_jobs_are_switched_off_and_runs_once_they_are_on(actor, sent):
    job = schedule_once(actor=actor, name="Remind me", prompt="Chase the Baltic invoice", at="2031-01-09T09:00").job
    came = timezone.now() - timedelta(hours=3)  # its moment came while jobs were off, hours ago
    Job.objects.filter(pk=job.pk).update(at=came, next_run_at=came)
    switch(actor.org, False)
    assert tick_task(job.pk) == "nothing due"  # beat's wake-up
    assert sweep_jobs_task(grace_seconds=0) == 0
    assert not Run.objects.filter(chat=job.chat).exists()
    assert Job.objects.filter(pk=job.pk).exists()  # still scheduled, waiting
    update_job(actor=actor, job_id=job.public_id, enabled=False)  # paused and resumed while it waits
    update_job(actor=actor, job_id=job.public_id, enabled=True)
    switch(actor.org, True)
    assert sweep_jobs_task(grace_seconds=0) == 1
    assert sent == [("jobs.tasks.tick_task", [job.pk])]
    assert tick_task(job.pk) == "ran"
    [run] = Run.objects.filter(chat=job.chat)
    assert run.status == "ok"
    assert not Job.objects.filter(pk=job.pk).exists()  # a one-off deletes itself after its run


def test_a_run_asked_for_while_jobs_are_off_stays_queued_until_they_are_on(
    actor, sent, django_capture_on_commit_callbacks
):
    job = schedule_job(actor=actor, name="Digest", prompt="What changed?", schedule="0 9 * * 1").job
    with django_capture_on_commit_callbacks(execute=True):
        update_job(actor=actor, job_id=job.public_id, run_now=True)
    [(task, [run_id])] = sent
    assert task == "jobs.tasks.run_task"
    switch(actor.org, False)
    assert run_task(run_id) == "nothing to run"
    assert Run.objects.get(pk=run_id).status == "queued"
    switch(actor.org, True)
    assert run_task(run_id) == "ran"
    assert run_task(run_id) == "nothing to run"  # a second message for it runs nothing
    assert Run.objects.get(pk=run_id).status == "ok"


def test_a_run_asked_for_while_the_broker_is_away_is_kept_and_the_sweep_sends_it(
    actor, broker_down, django_capture_on_commit_callbacks, monkeypatch
):
    job = schedule_job(actor=actor, name="Digest", prompt="What changed?", schedule="0 9 * * 1").job
    with django_capture_on_commit_callbacks(execute=True):
        update_job(actor=actor, job_id=job.public_id, run_now=True)
    [run] = Run.objects.filter(job=job)
    assert run.status == "queued"  # kept, though its message was lost
    messages: list[tuple[str, list[object]]] = []
    monkeypatch.setattr(
        "brain.infra.queueing.current_app.send_task", lambda name, args, **kw: messages.append((name, args))
    )
    assert sweep_jobs_task(grace_seconds=0) == 1
    assert messages == [("jobs.tasks.run_task", [run.pk])]
    assert run_task(run.pk) == "ran"
    run.refresh_from_db()
    assert run.status == "ok"


def test_a_queued_run_whose_job_was_deleted_ends_saying_so(actor):
    job = schedule_job(actor=actor, name="Digest", prompt="What changed?", schedule="0 9 * * 1").job
    update_job(actor=actor, job_id=job.public_id, run_now=True)
    [run_id] = Run.objects.filter(job=job).values_list("pk", flat=True)
    update_job(actor=actor, job_id=job.public_id, delete=True)
    assert run_task(run_id) == "nothing to run"
    run = Run.objects.get(pk=run_id)
    assert (run.status, run.report) == ("failed", "This run did not start: its job was deleted first.")


def test_the_job_admin_lists_waiting_jobs_and_says_the_switch_is_off(actor):
    job = schedule_job(actor=actor, name="Team digest", prompt="p", schedule="0 9 * * *", scope="shared").job
    switch(actor.org, False)
    operator = make_user(actor.org, username="operator")
    operator.is_staff = operator.is_superuser = True
    operator.save()
    client = Client()
    client.force_login(operator)
    page = client.get("/admin/jobs/job/").content.decode()
    assert job.name in page
    assert f"Jobs are switched off for {actor.org.name}" in page
