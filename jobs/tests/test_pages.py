"""The Jobs page's answers: a colleague's personal job is answered exactly as a missing one."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from brain.models import Features
from conftest import make_org, make_user
from jobs.models import Job
from jobs.runs import run_queued
from jobs.services import schedule_job

pytestmark = pytest.mark.django_db


def page(response) -> str:
    """The page without its CSRF token, which is masked afresh in every answer."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_colleagues_hidden_job_is_answered_exactly_as_a_missing_one(actor):
    hidden = schedule_job(actor=actor, name="My digest", prompt="p", schedule="0 9 * * *").job
    missing = Job.objects.order_by("-pk").values_list("pk", flat=True)[0] + 1000
    colleague = logged_in(make_user(actor.org))
    for action in ("pause", "run", "delete"):
        seen = colleague.post(f"/jobs/{hidden.pk}/{action}/")
        unknown = colleague.post(f"/jobs/{missing}/{action}/")
        assert (seen.status_code, page(seen)) == (unknown.status_code, page(unknown))
        assert seen.status_code == 404
    assert Job.objects.get(pk=hidden.pk).enabled
    assert not hidden.runs.exists()
    seen, unknown = colleague.get(f"/jobs/chats/{hidden.chat_id}/"), colleague.get(f"/jobs/chats/{missing}/")
    assert (seen.status_code, page(seen)) == (unknown.status_code, page(unknown))
    assert seen.status_code == 404


@pytest.fixture
def jobs_on(actor):
    Features.objects.filter(org=actor.org).update(jobs=True)
    return actor


FORM = {"name": "Friday digest", "prompt": "What changed about BigCo this week?", "when": "repeat",
        "schedule": "30 17 * * 5", "time_zone": "Europe/Madrid", "scope": "personal", "mode": "agent"}  # fmt: skip


def test_a_member_makes_a_job_on_the_page_and_reads_its_schedule_back(jobs_on):
    client = logged_in(jobs_on.user)
    assert '<option value="Europe/Madrid">' in client.get("/jobs/new/").content.decode()
    answer = client.post("/jobs/new/", {**FORM, "org": jobs_on.org.slug}, follow=True)
    assert answer.status_code == 200
    job = Job.objects.get(org=jobs_on.org, name="Friday digest")
    assert (job.cron, job.time_zone, job.scope) == ("30 17 * * 5", "Europe/Madrid", "personal")
    assert job.owner_id == jobs_on.user.pk
    assert "Friday digest: made, Fridays at 17:30, Europe/Madrid; next run" in answer.content.decode()


def test_a_refused_job_keeps_what_was_typed_and_saves_nothing(jobs_on):
    client = logged_in(jobs_on.user)
    bad_cron = client.post("/jobs/new/", {**FORM, "schedule": "every friday"})
    assert bad_cron.status_code == 400
    assert "What changed about BigCo this week?" in bad_cron.content.decode()  # the prompt is still there
    past = client.post("/jobs/new/", {**FORM, "when": "once", "at": "2001-01-01T09:00"})
    assert past.status_code == 400
    assert "is in the past" in past.content.decode()
    no_moment = client.post("/jobs/new/", {**FORM, "when": "once", "at": ""})
    assert no_moment.status_code == 400
    assert "A one-off needs its date and time." in no_moment.content.decode()
    assert not Job.objects.filter(org=jobs_on.org).exists()


def test_a_one_off_made_on_the_page_runs_at_the_local_moment(jobs_on):
    client = logged_in(jobs_on.user)
    client.post("/jobs/new/", {**FORM, "when": "once", "at": "2031-01-09T09:00", "time_zone": "Europe/Madrid"})
    job = Job.objects.get(org=jobs_on.org)
    assert (job.kind, str(job.at)) == ("once", "2031-01-09 08:00:00+00:00")


def test_the_owner_changes_a_job_and_a_colleague_may_rename_a_shared_one_but_not_its_prompt(jobs_on):
    shared = schedule_job(actor=jobs_on, name="Digest", prompt="p", schedule="0 9 * * 1-5", scope="shared").job
    owner = logged_in(jobs_on.user)
    form = owner.get(f"/jobs/{shared.pk}/edit/").content.decode()
    assert 'value="0 9 * * 1-5"' in form
    assert 'name="scope"' not in form
    edit = {**FORM, "name": "Digest", "prompt": "p", "schedule": "0 9 * * 1-5", "time_zone": "UTC"}
    owner.post(f"/jobs/{shared.pk}/edit/", {**edit, "when": "once", "at": "2031-03-02T10:30"})
    shared.refresh_from_db()
    assert (shared.kind, shared.cron, str(shared.at)) == ("once", "", "2031-03-02 10:30:00+00:00")
    colleague = logged_in(make_user(jobs_on.org))
    now = {**edit, "when": "once", "at": "2031-03-02T10:30"}
    assert colleague.post(f"/jobs/{shared.pk}/edit/", {**now, "name": "Weekday digest"}).status_code == 302
    refused = colleague.post(f"/jobs/{shared.pk}/edit/", {**now, "prompt": "Mail everything to me"})
    assert refused.status_code == 400
    assert "Only its owner" in refused.content.decode()
    shared.refresh_from_db()
    assert (shared.name, shared.prompt) == ("Weekday digest", "p")


def test_a_colleagues_personal_job_cannot_be_opened_for_editing(jobs_on):
    hidden = schedule_job(actor=jobs_on, name="Mine", prompt="p", schedule="0 9 * * *").job
    missing = hidden.pk + 1000
    colleague = logged_in(make_user(jobs_on.org))
    for method in ("get", "post"):
        seen = getattr(colleague, method)(f"/jobs/{hidden.pk}/edit/", FORM)
        unknown = getattr(colleague, method)(f"/jobs/{missing}/edit/", FORM)
        assert (seen.status_code, page(seen)) == (unknown.status_code, page(unknown)) == (404, page(unknown))
    assert Job.objects.get(pk=hidden.pk).name == "Mine"


def test_run_now_from_the_script_answers_in_json_and_the_runs_table_is_its_own_part(jobs_on):
    job = schedule_job(actor=jobs_on, name="Digest", prompt="p", schedule="0 9 * * 1-5").job
    client = logged_in(jobs_on.user)
    answer = client.post(f"/jobs/{job.pk}/run/", headers={"X-Requested-With": "fetch"})
    assert answer.json() == {"ok": True, "message": "Digest: queued to run within a minute."}
    part = client.get(f"/jobs/runs/{jobs_on.org.pk}/").content.decode()
    assert 'data-run-status="queued"' in part
    assert "<html" not in part
    paused = client.post(f"/jobs/{job.pk}/pause/")
    assert paused.status_code == 302
    refused = client.post(f"/jobs/{job.pk}/run/", headers={"X-Requested-With": "fetch"})
    assert refused.status_code == 400
    assert "is paused" in refused.json()["message"]
    assert refused.json()["message"] == "Digest is paused, so it does not run now: resume it first."  # no id
    other = make_org()
    Features.objects.filter(org=other).update(jobs=True)
    assert client.get(f"/jobs/runs/{other.pk}/").status_code == 404  # not a member there


def test_the_status_part_says_a_jobs_run_under_way_in_its_row_and_then_how_it_ended(jobs_on):
    job = schedule_job(actor=jobs_on, name="Digest", prompt="p", schedule="0 9 * * 1-5").job
    client = logged_in(jobs_on.user)
    before = client.get(f"/jobs/status/{jobs_on.org.pk}/").json()
    assert before["busy"] is False
    assert "not yet" in before["last_runs"][str(job.pk)]
    client.post(f"/jobs/{job.pk}/run/", headers={"X-Requested-With": "fetch"})
    queued = client.get(f"/jobs/status/{jobs_on.org.pk}/").json()
    assert queued["busy"] is True
    assert 'data-job-status="queued"' in queued["last_runs"][str(job.pk)]
    assert 'data-run-status="queued"' in queued["runs"]
    run_queued(job.runs.get().pk)
    ended = client.get(f"/jobs/status/{jobs_on.org.pk}/").json()
    assert ended["busy"] is False
    assert 'data-job-status="ok"' in ended["last_runs"][str(job.pk)]
    other = make_org()
    Features.objects.filter(org=other).update(jobs=True)
    assert client.get(f"/jobs/status/{other.pk}/").status_code == 404  # not a member there
