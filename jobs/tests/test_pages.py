"""The Jobs page's answers: a colleague's personal job is answered exactly as a missing one."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from conftest import make_user
from jobs.models import Job
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
