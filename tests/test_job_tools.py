"""The job tools through the MCP SDK client and REST: hidden while jobs are off, read and write
tokens see what they may, schedules come back in words and bad ones are refused with why."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from brain.models import Features
from conftest import make_org, make_token
from jobs.runs import tick
from tests.conftest import call, run_mcp

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {"schedule_once", "schedule_job", "list_jobs", "update_job"}


def names(url: str, token: str) -> set[str]:
    return {t.name for t in run_mcp(url, token, lambda s: s.list_tools()).tools}


def test_job_tools_appear_only_while_jobs_are_on_and_speak_in_words(brain_url):
    org = make_org()
    issued = make_token(org)
    writer = issued.plaintext
    reader = make_token(org, user=issued.token.user, scopes="read").plaintext  # the same person, read only
    assert not TOOLS & names(brain_url, writer)
    Features.objects.filter(org=org).update(jobs=True)
    assert TOOLS & names(brain_url, reader) == {"list_jobs"}
    assert TOOLS & names(brain_url, writer) == TOOLS
    weekly = {"name": "BigCo weekly", "prompt": "What changed about BigCo?", "schedule": "30 17 * * 5"}
    made = call(brain_url, writer, "schedule_job", {**weekly, "timezone": "America/New_York"})
    assert not made.is_error, made.content[0].text
    job = made.structured_content["job"]
    assert job["schedule"].startswith("Fridays at 17:30, America/New_York; next run ")
    too_often = call(brain_url, writer, "schedule_job", {"name": "x", "prompt": "y", "schedule": "* * * * *"})
    assert too_often.is_error
    assert "5 minutes" in too_often.content[0].text
    listed = call(brain_url, reader, "list_jobs", {}).structured_content["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]
    client = Client(headers={"Authorization": f"Bearer {writer}"})
    paused = client.post(f"/api/v1/jobs/{job['id']}", {"enabled": False}, content_type="application/json")
    assert paused.status_code == 200, paused.content
    assert paused.json()["job"]["enabled"] is False
    gone = client.post(f"/api/v1/jobs/{job['id']}", {"delete": True}, content_type="application/json").json()
    assert gone["job"] is None
    assert client.get("/api/v1/jobs").json()["jobs"] == []


def test_a_one_offs_report_is_listed_after_it_deleted_itself_to_those_who_could_read_it(brain_url):
    org = make_org()
    Features.objects.filter(org=org).update(jobs=True)
    owner = make_token(org).plaintext
    colleague = make_token(org).plaintext
    at = (timezone.now() + timedelta(days=2)).replace(hour=9, minute=0, second=0, microsecond=0)
    for name, scope in (("Remind me about Baltic", "personal"), ("Team reminder", "shared")):
        asked = {"name": name, "prompt": "Chase the Baltic invoice", "at": f"{at:%Y-%m-%dT%H:%M}", "scope": scope}
        made = call(brain_url, owner, "schedule_once", asked)
        assert not made.is_error, made.content[0].text
        job_id = made.structured_content["job"]["id"]
        assert tick(int(job_id.removeprefix("job_")), now=at + timedelta(seconds=5)) is not None
    listed = call(brain_url, owner, "list_jobs", {})
    assert listed.structured_content["jobs"] == []  # both one-offs deleted themselves
    runs = {run["job"]: run for run in listed.structured_content["runs"]}
    assert set(runs) == {"Remind me about Baltic", "Team reminder"}
    mine = runs["Remind me about Baltic"]
    assert (mine["job_id"], mine["status"]) == (None, "ok")
    assert "No language model wrote this" in mine["report"]
    assert re.search(r"/jobs/chats/\d+/$", mine["chat"])
    text = listed.content[0].text
    assert not text.lstrip().startswith("{")  # lines, not JSON
    assert f"{mine['id']}: Remind me about Baltic (job deleted), ok, for {at:%Y-%m-%d %H:%M} UTC" in text
    theirs = call(brain_url, colleague, "list_jobs", {}).structured_content["runs"]
    assert [run["job"] for run in theirs] == ["Team reminder"]  # a personal job's run stays its owner's
    assert call(brain_url, owner, "list_jobs", {"runs": 0}).structured_content["runs"] == []
