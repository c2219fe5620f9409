"""Jobs: scheduling in words, who may change what, one run per moment, and the evidence digest
a run writes without a language model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from brain.core.errors import InvalidArgument, NotFound
from brain.models import Membership
from conftest import make_actor, make_user
from jobs.models import Chat, Job, Message, Run
from jobs.runs import tick
from jobs.services import list_jobs, schedule_job, schedule_once, update_job
from memory.tests.factories import save

pytestmark = pytest.mark.django_db


def test_a_recurring_job_is_confirmed_in_words_and_gets_a_beat_entry_in_its_time_zone(actor):
    made = schedule_job(
        actor=actor,
        name="Morning digest",
        prompt="What changed about BigCo?",
        schedule="0 9 * * 1-5",
        time_zone="Europe/Madrid",
    )
    assert made.schedule.startswith("weekdays at 09:00, Europe/Madrid; next run ")
    entry = PeriodicTask.objects.get(name=f"job {made.job.pk}")
    assert (entry.task, entry.queue, entry.crontab.hour, str(entry.crontab.timezone)) == (
        "jobs.tasks.tick_task", "jobs", "9", "Europe/Madrid")  # fmt: skip
    assert made.job.memory == "personal"  # defaults to the scope
    assert Message.objects.get(chat=made.job.chat).text == "What changed about BigCo?"


@pytest.mark.parametrize(
    ("schedule", "zone", "words"),
    [
        ("*/2 * * * *", "UTC", "5 minutes"),
        ("0 25 * * *", "UTC", "hour"),
        ("0 9 * *", "UTC", "five"),
        ("0 9 * * 1-5", "Europe/Madird", "IANA"),
    ],
)
def test_a_bad_schedule_is_refused_with_what_is_wrong(actor, schedule, zone, words):
    with pytest.raises(InvalidArgument, match=words):
        schedule_job(actor=actor, name="x", prompt="y", schedule=schedule, time_zone=zone)
    assert not Job.objects.filter(org=actor.org).exists()


def test_a_one_off_in_the_past_is_refused_with_the_time_now_and_a_date_alone_means_nine(actor):
    with pytest.raises(InvalidArgument, match="it is now"):
        schedule_once(actor=actor, name="Chase", prompt="Chase the invoice", at="2020-01-01T09:00")
    next_year = timezone.now().year + 1
    made = schedule_once(
        actor=actor, name="Chase", prompt="Chase the invoice", at=f"{next_year}-03-02", time_zone="Europe/Madrid"
    )
    assert made.job.at == datetime(next_year, 3, 2, 8, 0, tzinfo=UTC)  # 09:00 in Madrid is 08:00 UTC in March
    assert PeriodicTask.objects.get(name=f"job {made.job.pk}").one_off


def test_people_see_their_own_jobs_and_shared_ones_and_change_what_they_may(actor, other_org_actor):
    colleague = make_actor(actor.org, make_user(actor.org))
    admin = make_actor(actor.org, make_user(actor.org, role=Membership.ADMIN))
    mine = schedule_job(actor=actor, name="Mine", prompt="p", schedule="0 9 * * *").job
    team = schedule_job(actor=actor, name="Team", prompt="p", schedule="0 9 * * *", scope="shared").job
    assert [s.job.name for s in list_jobs(actor=colleague)] == ["Team"]
    with pytest.raises(NotFound):
        update_job(actor=colleague, job_id=mine.public_id, enabled=False)
    paused = update_job(actor=colleague, job_id=team.public_id, enabled=False)
    assert paused is not None
    assert not paused.job.enabled
    assert not PeriodicTask.objects.get(name=f"job {team.pk}").enabled
    assert update_job(actor=admin, job_id=mine.public_id, name="Renamed") is not None
    for wrong in (team.public_id, "job_0", "job_x", "cmt_1"):
        with pytest.raises(NotFound):
            update_job(actor=other_org_actor, job_id=wrong, enabled=False)
    assert update_job(actor=actor, job_id=mine.public_id, delete=True) is None
    assert Chat.objects.filter(pk=mine.chat_id).exists()  # its chat stays
    assert not PeriodicTask.objects.filter(name=f"job {mine.pk}").exists()


def test_a_tick_runs_its_moment_once_and_writes_an_evidence_digest_into_the_chat(actor, settings):
    settings.BRAIN_EXTRACT_FACTS = False
    save(actor, "BigCo account notes", "BigCo renewed the enterprise plan for 52,000 USD this week.")
    job = schedule_job(
        actor=actor, name="BigCo weekly", prompt="What changed about BigCo this week?", schedule="0 17 * * 5"
    ).job
    friday = datetime(2026, 12, 4, 17, 0, 30, tzinfo=UTC)
    run = tick(job.pk, now=friday)
    assert run is not None
    assert tick(job.pk, now=friday + timedelta(seconds=20)) is None  # a second beat or a redelivery
    run.refresh_from_db()
    assert run.status == "ok"
    assert "No language model wrote this" in run.report
    assert "BigCo account notes" in run.report
    assert [c["tool"] for c in run.tool_calls] == ["ask_company_memory", "memory_timeline"]
    assert run.activity is not None
    assert Message.objects.filter(chat=job.chat, role="report", run=run).exists()
    job.refresh_from_db()
    assert job.last_status == "ok"
    assert job.next_run_at == datetime(2026, 12, 11, 17, 0, tzinfo=UTC)
    assert tick(job.pk, now=friday + timedelta(hours=2)) is None  # past the grace window: not made up


def test_a_one_off_runs_once_then_deletes_itself_and_its_chat_stays(actor):
    job = schedule_once(actor=actor, name="Chase", prompt="Chase the Baltic invoice", at="2031-01-09T09:00").job
    assert tick(job.pk, now=datetime(2031, 1, 9, 8, 59, tzinfo=UTC)) is None  # not yet
    run = tick(job.pk, now=datetime(2031, 1, 9, 9, 0, 5, tzinfo=UTC))
    assert run is not None
    assert not Job.objects.filter(pk=job.pk).exists()
    assert Run.objects.get(pk=run.pk).chat_id == job.chat_id


def test_a_job_whose_owner_left_pauses_with_the_reason_and_the_run_fails_readably(actor):
    job = schedule_job(actor=actor, name="Digest", prompt="p", schedule="0 9 * * *").job
    Membership.objects.filter(org=actor.org, user=actor.user).delete()
    run = tick(job.pk, now=datetime(2026, 12, 2, 9, 0, 1, tzinfo=UTC))
    assert run is not None
    run.refresh_from_db()
    assert run.status == "failed"
    assert "no longer a member" in run.report
    job.refresh_from_db()
    assert (job.enabled, job.paused_reason) == (False, "Its owner is no longer a member.")


def test_an_owner_who_asked_is_mailed_each_report(actor, mailoutbox):
    job = schedule_job(actor=actor, name="Digest", prompt="What changed?", schedule="0 9 * * *", notify=True).job
    tick(job.pk, now=datetime(2026, 12, 2, 9, 0, 1, tzinfo=UTC))
    [mail] = mailoutbox
    assert (mail.subject, mail.to) == ("[Brain] Digest: ok", [actor.user.email])
    assert "No language model wrote this" in mail.body
    quiet = update_job(actor=actor, job_id=job.public_id, notify=False)
    assert quiet is not None
    tick(job.pk, now=datetime(2026, 12, 3, 9, 0, 1, tzinfo=UTC))
    assert len(mailoutbox) == 1
