"""A job made over a connection limited to personal memories keeps that limit when it runs
unattended: its model is not offered the tools that write what others read, and a call to one
is refused."""

from __future__ import annotations

import pytest

from conftest import make_actor
from jobs.runs import tick
from jobs.services import schedule_job
from jobs.tests.test_agent import FRIDAY, model, tool_call  # noqa: F401 -- model is a fixture
from registers.models import Commitment
from registers.tests.helpers import switch_on

pytestmark = pytest.mark.django_db


def test_a_run_of_a_job_made_personal_only_cannot_write_what_others_read(org, model):  # noqa: F811
    switch_on(org, "commitments")
    personal = make_actor(org, scopes="read,write,personal")
    model.script = [
        tool_call("record_commitment", {"owner": "Priya Shah", "what": "Send BigCo the contract."}, 1),
        tool_call("remember", {"content": "BigCo's renewal is due in March.", "scope": "shared"}, 2),
        {"role": "assistant", "content": "Done."},
    ]
    job = schedule_job(
        actor=personal, name="Notes", prompt="Note the renewal", schedule="30 17 * * 5", write_tools=["remember"]
    ).job
    assert job.personal_only
    run = tick(job.pk, now=FRIDAY)
    assert run is not None
    offered = {t["function"]["name"] for t in model.received[0]["tools"]}
    assert "record_commitment" not in offered
    assert "remember" in offered
    assert not Commitment.objects.filter(org=org).exists()
    calls = [(c["tool"], c["ok"]) for c in run.tool_calls]
    assert ("record_commitment", True) not in calls  # refused before it runs, as a tool it was not offered
    assert ("remember", True) in calls
    from memory.models import Fact

    assert Fact.objects.get(org=org, statement__startswith="BigCo's renewal").scope == "personal"


def test_a_run_of_a_job_made_with_full_access_still_may_write_for_the_organisation(org, model):  # noqa: F811
    switch_on(org, "commitments")
    model.script = [
        tool_call("record_commitment", {"owner": "Priya Shah", "what": "Send BigCo the contract."}, 1),
        {"role": "assistant", "content": "Done."},
    ]
    job = schedule_job(
        actor=make_actor(org), name="Notes", prompt="Note it", schedule="30 17 * * 5", write_tools=["record_commitment"]
    ).job
    assert not job.personal_only
    assert tick(job.pk, now=FRIDAY) is not None
    assert Commitment.objects.filter(org=org).count() == 1
