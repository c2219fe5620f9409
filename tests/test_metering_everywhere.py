"""Every way memory comes out is metered by one rule (``usage.metering.metered``): at zero credits
each MCP prompt, each billed tool, the REST reads and the memory pages are refused with the
out-of-credits answer and show nothing of memory; with credits a prompt is charged and counted,
and given back when it fails; a job's run is refused before it reads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import Client
from mcp.shared.exceptions import MCPError
from rest_framework.test import APIClient

from brain.mcp.prices import of_call
from brain.mcp.registry import PROMPTS, TOOLS, mcp_prompt
from brain.models import ToolCall
from conftest import make_token
from jobs.models import Run
from jobs.runs import tick
from jobs.services import schedule_job
from tests.conftest import run_mcp
from tests.small_org import small_organisation
from tests.test_tool_contract import minimal_arguments
from usage.metering import month_of
from usage.models import Account, Month

pytestmark = pytest.mark.django_db(transaction=True)

# Billed free on purpose: none returns memory content (forget only says what it removed, saving
# knowledge says it was saved). A tool marked free that is not here fails the walk below, and
# every tool that is not free is walked, so a new tool is covered the day it is registered.
NEVER_BILLED = {
    "init", "health", "get_profile", "start_company_memory_activity", "report_issue", "send_feedback", "forget",
    "add_company_knowledge",
}  # fmt: skip
PROMPT_ARGUMENTS = {"recall": {"topic": "deploys"}}
# Words of small_organisation's documents, memories and registers: none may reach a refused caller.
CONTENT = ["premium economy", "Wellington", "Tuesday", "Priya", "Atlas", "runbook", "Deploy digest"]
OUT_OF_CREDITS = "has used the 1,000 free reads"


def spend_everything(org: Any, credits: int = 0) -> None:
    Month.objects.update_or_create(org=org, month=month_of(org), defaults={"free_used": 1000, "reads": 0})
    Account.objects.filter(org=org).update(credits=credits)


def shows_content(text: str) -> list[str]:
    return [word for word in CONTENT if word.lower() in text.lower()]


def month(org: Any) -> tuple[int, int, int]:
    row = Month.objects.get(org=org, month=month_of(org))
    return row.reads, row.free_used, row.credits_spent


def test_the_free_tools_are_exactly_the_ones_classified_as_never_billed():
    assert {name for name, spec in TOOLS.items() if of_call(spec.billing) is None} == NEVER_BILLED


def test_at_zero_credits_every_prompt_and_every_billed_tool_is_refused_over_mcp_and_shows_nothing(brain_url):
    org, actor, known = small_organisation()
    token = make_token(org, user=actor.user).plaintext
    spend_everything(org)
    billed = sorted(set(TOOLS) - NEVER_BILLED)

    async def walk(session: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        visible = {tool.name for tool in (await session.list_tools()).tools}
        assert set(billed) <= visible  # every billed tool is reachable for this member: none is skipped
        tools = {name: await session.call_tool(name, minimal_arguments(name, known)) for name in billed}
        prompts: dict[str, Any] = {}
        for name in PROMPTS:
            try:
                prompts[name] = await session.get_prompt(name, PROMPT_ARGUMENTS.get(name, {}))
            except MCPError as exc:
                prompts[name] = exc
        return tools, prompts

    tools, prompts = run_mcp(brain_url, token, walk)

    for name, result in tools.items():
        text = " ".join(part.text for part in result.content)
        assert result.is_error, (name, text)
        assert result.content[0].text.startswith(f"Brain cannot run {name}: "), name
        assert '"code": "out_of_credits"' in text, name
        assert shows_content(text) == [], name
    for name, answer in prompts.items():
        assert isinstance(answer, MCPError), (name, "the prompt answered at zero credits")
        assert OUT_OF_CREDITS in answer.message, name
        assert f"the prompt {name}" in answer.message
        assert answer.data["code"] == "out_of_credits"
        assert shows_content(answer.message) == [], name
    assert month(org) == (0, 1000, 0)  # nothing taken, nothing counted
    refused = ToolCall.objects.filter(org=org, outcome="refused", error_code="out_of_credits")
    assert sorted(refused.values_list("tool", flat=True)) == sorted(billed + [f"prompt:{n}" for n in PROMPTS])


def test_a_prompt_with_credits_is_paid_for_and_counted_as_a_read(brain_url):
    org, actor, _ = small_organisation()
    token = make_token(org, user=actor.user).plaintext
    spend_everything(org, credits=5)

    result = run_mcp(brain_url, token, lambda s: s.get_prompt("recall", {"topic": "travel policy"}))

    assert "premium economy" in result.messages[0].content.text  # type: ignore[union-attr]
    assert Account.objects.get(org=org).credits == 4
    assert month(org) == (1, 1000, 1)
    call = ToolCall.objects.get(org=org, tool="prompt:recall")
    assert (call.outcome, call.credits, call.via) == ("ok", 1, "mcp")


@pytest.fixture
def failing_prompt():
    @mcp_prompt("test_failing_prompt", title="Fails")
    def failing(actor: Any, arguments: dict[str, str]) -> str:
        """Always fails."""
        raise RuntimeError("the vault is at 10.0.0.7")

    yield
    PROMPTS.pop("test_failing_prompt")


def test_a_prompt_that_fails_is_given_back_and_recorded_as_an_error(brain_url, failing_prompt):
    org, actor, _ = small_organisation()
    token = make_token(org, user=actor.user).plaintext
    spend_everything(org, credits=5)

    async def ask(session: Any) -> MCPError:
        with pytest.raises(MCPError) as failed:
            await session.get_prompt("test_failing_prompt", {})
        return failed.value

    error = run_mcp(brain_url, token, ask)

    assert "10.0.0.7" not in error.message
    assert Account.objects.get(org=org).credits == 5
    assert month(org) == (0, 1000, 0)
    call = ToolCall.objects.get(org=org, tool="prompt:test_failing_prompt")
    assert (call.outcome, call.credits) == ("error", 0)


def test_rest_reads_at_zero_credits_answer_402_with_the_refusal_and_no_content():
    org, actor, known = small_organisation()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(org, user=actor.user).plaintext}")
    spend_everything(org)

    answers = [
        client.get("/api/v1/documents"),
        client.get(f"/api/v1/documents/{known['document_id']}"),
        client.post("/api/v1/search", {"query": "deploy"}, format="json"),
        client.get("/api/v1/commitments"),
    ]

    for answer in answers:
        assert answer.status_code == 402, answer.content
        assert answer.json()["code"] == "out_of_credits"
        assert shows_content(answer.content.decode()) == []
    assert month(org) == (0, 1000, 0)


def test_memory_pages_at_zero_credits_say_why_and_show_nothing_of_memory():
    org, actor, known = small_organisation()
    browser = Client()
    browser.force_login(actor.user)
    spend_everything(org)
    document = int(known["document_id"].removeprefix("doc_"))

    pages = [
        browser.get("/memory/search/", {"q": "deploy"}),
        browser.get(f"/memory/documents/{document}/"),
        browser.get("/registers/"),
    ]

    for page in pages:
        html = page.content.decode()
        assert page.status_code == 402, (page.request["PATH_INFO"], page.status_code)
        assert OUT_OF_CREDITS in html.replace("&#x27;", "'")
        assert shows_content(html) == [], page.request["PATH_INFO"]
    assert month(org) == (0, 1000, 0)
    assert ToolCall.objects.get(org=org, tool="page:registers").error_code == "out_of_credits"


def test_the_registers_page_with_credits_is_paid_for_as_one_read():
    org, actor, _ = small_organisation()
    browser = Client()
    browser.force_login(actor.user)
    spend_everything(org, credits=3)

    page = browser.get("/registers/")

    assert page.status_code == 200
    assert "Priya Shah will review the deploy runbook" in page.content.decode()
    assert (Account.objects.get(org=org).credits, month(org)) == (2, (1, 1000, 1))
    assert ToolCall.objects.get(org=org, tool="page:registers").credits == 1


def test_a_job_run_at_zero_credits_fails_saying_so_before_it_reads_anything():
    org, actor, _ = small_organisation()
    job = schedule_job(actor=actor, name="Weekly", prompt="What changed about deploys?", schedule="0 9 * * 1").job
    spend_everything(org)

    run = tick(job.pk, now=datetime(2026, 12, 7, 9, 0, 5, tzinfo=UTC))

    assert run is not None
    run = Run.objects.get(pk=run.pk)
    assert run.status == "failed"
    assert "OutOfCredits" in run.error
    assert f"the job {job.name}" in run.report
    assert OUT_OF_CREDITS in run.report
    assert shows_content(run.report) == []
    assert (run.tool_calls, run.activity) == ([], None)
    assert not ToolCall.objects.filter(org=org, via="job").exists()
