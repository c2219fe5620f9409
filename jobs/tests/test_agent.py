"""Agent and chat runs against a loopback server speaking the chat-completions protocol with tool
calls: the run calls tools as its owner under its activity, delegates once, and never reaches what
its owner may not read; bounds and model failures end the run with a readable report."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import pytest

from brain.models import ToolCall
from conftest import make_actor, make_user
from jobs.runs import tick
from jobs.services import schedule_job
from jobs.tests.model_server import send_completion, serving
from memory.graph.memories import remember
from memory.tests.factories import save

pytestmark = pytest.mark.django_db
FRIDAY = datetime(2026, 12, 4, 17, 30, 5, tzinfo=UTC)


def tool_call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{n}", "type": "function",
                                                                  "function": function}]}  # fmt: skip


class Scripted(BaseHTTPRequestHandler):
    """Answers POST /v1/chat/completions with the next scripted message; keeps what it was sent."""

    script: ClassVar[list[dict[str, Any]]] = []
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Scripted.received.append(body)
        if not Scripted.script:
            self.send_response(500)
            self.end_headers()
            return
        send_completion(self, Scripted.script.pop(0))

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model(settings):
    Scripted.script, Scripted.received = [], []
    with serving(Scripted, settings):
        yield Scripted


def test_an_agent_run_searches_delegates_and_reports_as_its_owner(actor, model):
    save(actor, "BigCo renewal", "BigCo renewed the enterprise plan for 52,000 USD.")
    colleague = make_actor(actor.org, make_user(actor.org))
    remember(actor=colleague, content="My BigCo side deal is the Zorblatt discount.", scope="personal")
    model.script = [
        tool_call("search_company_memory", {"query": "BigCo"}, 1),
        tool_call("delegate", {"task": "Find the BigCo renewal price", "context": "enterprise plan"}, 2),
        {"role": "assistant", "content": "The renewal was 52,000 USD."},  # the worker's report
        {"role": "assistant", "content": "## BigCo this week\nBigCo renewed at 52,000 USD (BigCo renewal)."},
    ]
    job = schedule_job(actor=actor, name="BigCo weekly", prompt="What changed about BigCo?", schedule="30 17 * * 5").job
    run = tick(job.pk, now=FRIDAY)
    assert run is not None
    run.refresh_from_db()
    assert run.status == "ok", run.report
    assert run.report.startswith("## BigCo this week")
    assert [c["tool"] for c in run.tool_calls] == ["search_company_memory", "delegate"]
    main, _, worker, last = model.received
    offered = {t["function"]["name"] for t in main["tools"]}
    assert "delegate" in offered
    assert not offered & {"schedule_job", "update_job"}
    assert "delegate" not in {t["function"]["name"] for t in worker["tools"]}  # a worker cannot delegate
    sent = json.dumps(model.received)
    assert "BigCo renewal" in sent
    assert "Zorblatt" not in sent  # another user's personal memory never reaches the run
    calls = ToolCall.objects.filter(activity=run.activity)
    assert list(calls.values_list("tool", flat=True)) == ["search_company_memory"]
    assert last["messages"][-1]["role"] == "tool"


def test_a_run_that_reaches_its_step_bound_reports_what_it_had(actor, model, settings):
    settings.BRAIN_JOB_MAX_STEPS = 2
    model.script = [tool_call("search_company_memory", {"query": "BigCo"}, n) for n in range(5)]
    job = schedule_job(actor=actor, name="Loop", prompt="Keep searching", schedule="30 17 * * 5").job
    run = tick(job.pk, now=FRIDAY)
    assert run is not None
    run.refresh_from_db()
    assert run.status == "ok"
    assert run.report.startswith("The run stopped at the step limit")
    assert len(model.received) == 2


def test_a_model_failure_ends_the_run_failed_with_a_readable_report(actor, model):
    job = schedule_job(actor=actor, name="Broken", prompt="Anything", schedule="30 17 * * 5", mode="chat").job
    run = tick(job.pk, now=FRIDAY)  # the script is empty: the endpoint answers 500
    assert run is not None
    run.refresh_from_db()
    assert run.status == "failed"
    assert "model endpoint failed" in run.report
    job.refresh_from_db()
    assert job.last_status == "failed"


@pytest.mark.parametrize(("memory", "scope"), [("personal", "personal"), ("org", "shared"), ("off", None)])
def test_what_a_run_remembers_goes_where_the_job_says(actor, model, memory, scope):
    from memory.models import Fact

    model.script = [
        tool_call("remember", {"content": "BigCo's renewal is due in March.", "scope": "shared"}, 1),
        {"role": "assistant", "content": "Noted the renewal."},
    ]
    job = schedule_job(
        actor=actor,
        name="Notes",
        prompt="Note the renewal",
        schedule="30 17 * * 5",
        memory=memory,
        write_tools=["remember"],
    ).job
    run = tick(job.pk, now=FRIDAY)
    assert run is not None
    offered = {t["function"]["name"] for t in model.received[0]["tools"]}
    stored = Fact.objects.filter(org=actor.org, statement__startswith="BigCo's renewal")
    if scope is None:
        assert "remember" not in offered
        assert not stored.exists()
    else:
        assert "remember" in offered
        assert stored.get().scope == scope  # the job's memory, whatever the model asked for
