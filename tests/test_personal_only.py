"""A connection with access "Personal memories only" changes nothing other people read.

Every registered tool that writes is called over the real MCP client with arguments that would
change shared state (``SHARED_WRITES`` below: a tool registered without an entry there fails the
walk, so the next write tool is walked too), and the organisation's shared rows are compared
before and after each call. Then each hole found from outside, one test each, and the REST twins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from brain.core.errors import PermissionDenied
from brain.core.services import mark_memory_built
from brain.mcp.invoke import authorise
from brain.mcp.registry import TOOLS, ToolOutput, mcp_tool
from brain.models import Features
from conftest import make_actor, make_org, make_token, make_user
from contacts.models import Contact, HumanRequest
from contacts.services import save_contact_topics
from jobs.models import Chat, Job, Message
from jobs.services import schedule_job
from memory.graph.memories import remember
from memory.models import Chunk, Document, Entity, Fact
from registers.commitments.services import record_commitment
from registers.contradictions.services import raise_contradiction
from registers.glossary.services import define_term
from registers.models import Commitment, Contradiction, Term
from registers.tests.helpers import stated
from skills.models import Skill, SkillVersion
from tests.conftest import McpCaller

pytestmark = pytest.mark.django_db(transaction=True)

PERSONAL_ONLY = "read,write,personal"


@dataclass
class World:
    org: Any
    me: Any  # the person behind the personal-only connection
    token: str  # their personal-only token
    colleague: Any  # another member, with read and write
    shared_fact: str  # a shared memory the colleague remembered
    my_shared_fact: str  # a shared memory I remembered earlier, with my read-and-write token
    commitment: str
    contradiction: str
    fact_a: Fact
    fact_b: Fact
    term: str
    shared_job: str
    my_org_job: str  # my personal job whose runs store what they learn in shared memory
    contact: str


@pytest.fixture
def world() -> World:
    org = make_org()
    mark_memory_built(org=org)
    Features.objects.filter(org=org).update(commitments=True, contradictions=True, glossary=True, jobs=True)
    colleague = make_actor(org)
    me = make_user(org)
    me_with_write = make_actor(org, me)
    a = stated(colleague, "Price list", "The enterprise plan costs 48500 USD a year.", number=48500)
    b = stated(colleague, "Sales deck", "The enterprise plan costs 52000 USD a year.", number=52000)
    contradiction = raise_contradiction(
        actor=colleague,
        question="Does the enterprise plan cost 48500 or 52000 USD?",
        about="enterprise plan price",
        claim_a=a.statement,
        source_a="Price list",
        claim_b=b.statement,
        source_b="Sales deck",
        memory_id_a=a.public_id,
        memory_id_b=b.public_id,
    )
    contact = Contact.objects.create(
        org=org, name="Ivo Security", topics="VPN", email="ivo@example.com", channels=["email"]
    )
    save_contact_topics(contact)
    return World(
        org=org,
        me=me,
        token=make_token(org, me, scopes=PERSONAL_ONLY).plaintext,
        colleague=colleague,
        shared_fact=remember(actor=colleague, content="Priya Shah owns the VPN.", subject="Priya Shah").public_id,
        my_shared_fact=remember(actor=me_with_write, content="The office opens at 8.", scope="shared").public_id,
        commitment=record_commitment(actor=colleague, owner="Priya Shah", what="Send BigCo the contract.").public_id,
        contradiction=contradiction.public_id,
        fact_a=a,
        fact_b=b,
        term=define_term(actor=colleague, term="ARR", definition="Annual recurring revenue.").public_id,
        shared_job=schedule_job(
            actor=colleague, name="Weekly pricing", prompt="Check the price list.", schedule="0 9 * * 1", scope="shared"
        ).job.public_id,
        my_org_job=schedule_job(
            actor=me_with_write, name="Mine", prompt="Note renewals.", schedule="0 9 * * 2", memory="org"
        ).job.public_id,
        contact=contact.public_id,
    )


def shared_writes(w: World) -> dict[str, list[dict[str, Any]]]:
    """For each write tool, calls that would change what others read if a personal-only connection
    could make them (every tool that is not read-only must be here)."""
    job = {"name": "Team digest", "prompt": "Summarise the week for the team."}
    return {
        "report_issue": [{"category": "tool_error", "observed": "it failed", "expected": "it works"}],
        "github_comment": [{"repository": "acme/api", "number": 1, "body": "Shipped."}],
        "slack_post_message": [{"channel": "#general", "text": "Shipped."}],
        "send_feedback": [{"summary": "more detail please", "origin": "agent"}],
        "record_commitment": [
            {"owner": "Priya Shah", "what": "Send BigCo the signed contract.", "due_on": "2031-01-09"}
        ],  # fmt: skip
        "update_commitment": [
            {"id": w.commitment, "status": "dropped", "note": "Priya said it is off."},
            {"id": w.commitment, "what": "Send nothing.", "due_on": "2031-02-01"},
        ],
        "raise_contradiction": [
            {
                "question": "Is the VPN Priya's or Ivo's?",
                "about": "VPN owner",
                "claim_a": "Priya owns the VPN.",
                "source_a": "remember",
                "claim_b": "Ivo owns the VPN.",
                "source_b": "chat",
                "severity": "high",
            }
        ],  # fmt: skip
        "answer_contradiction": [
            {"id": w.contradiction, "answer": "a", "note": "Checked the billing system."},
            {"id": w.contradiction, "answer": "neither", "note": "They never disagreed."},
        ],
        "define_term": [
            {"term": "NRR", "definition": "Net revenue retention."},
            {"term": "ARR", "definition": "Average revenue per rep.", "id": w.term},
        ],
        "update_term": [
            {"id": w.term, "state": "open"},
            {"id": w.term, "state": "dismissed"},
            {"id": w.term, "definition": "Average revenue per rep."},
        ],
        "add_company_knowledge": [{"title": "Pricing", "content": "The enterprise plan costs 1 USD."}],
        "remember": [
            {"content": "The VPN moved to Ivo.", "scope": "shared"},
            {"content": "Ivo owns the VPN.", "scope": "shared", "replaces_memory_id": w.shared_fact},
            {"content": "Ivo owns the VPN.", "replaces_memory_id": w.shared_fact},
        ],
        "forget": [{"memory_id": w.my_shared_fact}, {"memory_id": w.shared_fact}],
        "skills_publish": [{"slug": "pricing", "name": "Pricing", "content": "Quote the list price."}],
        "request_human_info": [
            {"question": "Who owns the VPN?", "dispatch": True, "requested_contact_id": w.contact},
            {"question": "Who owns the VPN?"},
        ],
        "schedule_once": [
            {**job, "at": "2031-01-09T09:00", "scope": "shared"},
            {**job, "at": "2031-01-09T09:00", "memory": "org"},
        ],
        "schedule_job": [
            {**job, "schedule": "0 9 * * 1", "scope": "shared"},
            {**job, "schedule": "0 9 * * 1", "memory": "org"},
        ],
        "update_job": [
            {"id": w.shared_job, "enabled": False},
            {"id": w.shared_job, "prompt": "Record a commitment for Priya.", "run_now": True},
            {"id": w.shared_job, "delete": True},
            {"id": w.my_org_job, "prompt": "Record a commitment for Priya."},
            {"id": w.my_org_job, "run_now": True},
        ],
    }


def shared_state(org: Any) -> dict[str, list[Any]]:
    """Every row other members read: shared knowledge, the registers, shared jobs and chats, jobs
    whose runs store in shared memory, skills, and messages to people."""
    shared = {"org": org, "scope": "shared"}
    return {
        "documents": list(
            Document.objects.filter(**shared).values_list("pk", "title", "content_hash", "superseded_at").order_by("pk")
        ),  # fmt: skip
        "chunks": list(Chunk.objects.filter(**shared).values_list("pk", "text", "superseded_at").order_by("pk")),
        "facts": list(
            Fact.objects.filter(**shared)
            .values_list("pk", "statement", "superseded_at", "superseded_by")
            .order_by("pk")
        ),  # fmt: skip
        "entities": list(Entity.objects.filter(org=org).values_list("pk", "name", "type").order_by("pk")),
        "commitments": list(
            Commitment.objects.filter(org=org).values_list("pk", "state", "what", "note", "due_on").order_by("pk")
        ),  # fmt: skip
        "contradictions": list(
            Contradiction.objects.filter(org=org).values_list("pk", "state", "answer", "note").order_by("pk")
        ),  # fmt: skip
        "terms": list(
            Term.objects.filter(org=org).values_list("pk", "state", "definition", "memory", "note").order_by("pk")
        ),  # fmt: skip
        "jobs": list(
            Job.objects.filter(org=org)
            .exclude(scope="personal", memory__in=["personal", "off"])
            .values_list("pk", "name", "prompt", "scope", "memory", "enabled", "cron", "next_run_at")
            .order_by("pk")
        ),
        "shared chats": list(Message.objects.filter(chat__org=org, chat__shared=True).values_list("pk", "text")),
        "skills": list(SkillVersion.objects.filter(skill__org=org).values_list("pk", "status", "content")),
        "skill slugs": list(Skill.objects.filter(org=org).values_list("pk", "slug")),
        "requests to people": list(HumanRequest.objects.filter(org=org).values_list("pk", "status", "question")),
    }


def write_tools() -> list[str]:
    return sorted(name for name, spec in TOOLS.items() if not spec.read_only and not name.startswith("test_"))


def test_a_personal_only_connection_changes_nothing_others_read_through_any_write_tool(brain_url, world):
    table = shared_writes(world)
    assert [name for name in write_tools() if name not in table] == [], (
        "a write tool is missing from shared_writes: add the calls that would change shared state"
    )
    assert set(table) <= set(write_tools())
    changed, answered, unclear = [], [], []
    with McpCaller(brain_url, world.token) as mcp:
        for tool in write_tools():
            for arguments in table[tool]:
                before = shared_state(world.org)
                result = mcp.call(tool, arguments)
                after = shared_state(world.org)
                if before != after:
                    changed.append((tool, arguments, [k for k in before if before[k] != after[k]]))
                writes = getattr(TOOLS[tool], "writes", "shared")
                if writes != "own" and not result.is_error:
                    answered.append((tool, arguments))
                if writes == "shared" and "only store personal memories" not in result.content[0].text:
                    unclear.append((tool, result.content[0].text))
    assert changed == [], sorted({tool for tool, _, _ in changed})
    assert answered == []  # every call that would have written what others read was refused
    assert unclear == []  # with words telling the model what to do instead
    mine = Job.objects.filter(org=world.org, owner=world.me).exclude(pk=int(world.my_org_job.removeprefix("job_")))
    assert not mine.exists()  # every job it asked for was shared or stored in shared memory: none was made


def test_a_personal_only_connection_does_not_see_tools_that_write_what_others_read(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        listed = {tool.name for tool in mcp.run(lambda session: session.list_tools()).tools}
    shared = {name for name in write_tools() if TOOLS[name].writes == "shared"}
    assert {"record_commitment", "raise_contradiction", "answer_contradiction", "skills_publish"} <= shared
    assert listed & shared == set()
    assert {"remember", "forget", "schedule_job", "update_job", "report_issue"} <= listed


# --- the holes found from outside, one by one ---------------------------------------------


def test_record_commitment_is_refused_with_what_to_do_instead(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        result = mcp.call("record_commitment", {"owner": "Priya Shah", "what": "Send BigCo the signed contract."})
    assert result.is_error
    assert "personal memor" in result.content[0].text
    assert "remember with scope personal" in result.content[0].text
    assert not Commitment.objects.filter(org=world.org, what__startswith="Send BigCo the signed").exists()


def test_update_commitment_cannot_drop_a_colleagues_commitment(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        result = mcp.call("update_commitment", {"id": world.commitment, "status": "dropped", "note": "Off."})
    assert result.is_error
    assert Commitment.objects.get(org=world.org).state == "open"


def test_raise_contradiction_is_refused(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        result = mcp.call(
            "raise_contradiction",
            {
                "question": "Priya or Ivo?",
                "about": "VPN owner",
                "claim_a": "Priya owns the VPN.",
                "source_a": "a",
                "claim_b": "Ivo owns the VPN.",
                "source_b": "b",
            },
        )
    assert result.is_error
    assert Contradiction.objects.filter(org=world.org).count() == 1


def test_answer_contradiction_cannot_supersede_a_shared_fact_for_everyone(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        result = mcp.call("answer_contradiction", {"id": world.contradiction, "answer": "a", "note": "Checked."})
    assert result.is_error
    world.fact_b.refresh_from_db()
    assert world.fact_b.superseded_at is None
    assert Contradiction.objects.get(org=world.org).state == "open"


@pytest.mark.parametrize(
    ("tool", "when"), [("schedule_job", {"schedule": "0 9 * * 1"}), ("schedule_once", {"at": "2031-01-09T09:00"})]
)
def test_a_shared_job_is_refused_and_a_personal_one_is_made_personal_only(brain_url, world, tool, when):
    asked = {"name": "Team digest", "prompt": "Summarise the week.", **when}
    with McpCaller(brain_url, world.token) as mcp:
        shared = mcp.call(tool, {**asked, "scope": "shared"})
        personal = mcp.call(tool, asked)
    assert shared.is_error
    assert "shared job" in shared.content[0].text
    assert not personal.is_error
    made = Job.objects.get(org=world.org, owner=world.me, name="Team digest")
    assert (made.scope, made.memory, made.personal_only) == ("personal", "personal", True)
    assert not Chat.objects.filter(org=world.org, owner=world.me, shared=True).exists()


def test_update_term_cannot_withdraw_a_colleagues_definition_over_a_personal_only_connection(brain_url, world):
    memory = definition(world)
    with McpCaller(brain_url, world.token) as mcp:
        result = mcp.call("update_term", {"id": world.term, "state": "open"})
    assert result.is_error
    assert Term.objects.get(org=world.org).state == "defined"
    assert Fact.objects.filter(pk=memory.pk, superseded_at__isnull=True).exists()


def definition(world: World) -> Fact:
    """The memory behind the colleague's definition."""
    memory = Term.objects.get(org=world.org).memory
    assert memory is not None
    return memory


@pytest.mark.parametrize("state", ["open", "dismissed"])
def test_withdrawing_a_colleagues_definition_ends_its_memory_without_deleting_it(brain_url, world, state):
    memory = definition(world)
    document = memory.document
    assert document is not None
    someone = make_token(world.org, scopes="read,write").plaintext
    with McpCaller(brain_url, someone) as mcp:
        result = mcp.call("update_term", {"id": world.term, "state": state})
    assert not result.is_error, result.content[0].text
    memory.refresh_from_db()  # still there: only its author may forget it
    assert memory.superseded_at is not None  # but no longer found as what the word means
    document.refresh_from_db()
    assert document.superseded_at is not None
    assert not Chunk.objects.filter(document=document, superseded_at__isnull=True).exists()


def test_the_author_withdrawing_their_own_definition_deletes_its_memory(brain_url, world):
    memory = definition(world)
    author = make_token(world.org, world.colleague.user, scopes="read,write").plaintext
    with McpCaller(brain_url, author) as mcp:
        result = mcp.call("update_term", {"id": world.term, "state": "open"})
    assert not result.is_error, result.content[0].text
    assert not Fact.objects.filter(pk=memory.pk).exists()


def test_forget_keeps_my_own_shared_memory_over_a_personal_only_connection(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        refused = mcp.call("forget", {"memory_id": world.my_shared_fact})
        kept = mcp.call("remember", {"content": "I take tea without sugar."})
        forgotten = mcp.call("forget", {"memory_id": kept.structured_content["memory_id"]})
    assert refused.is_error
    assert "only store personal memories" in refused.content[0].text
    assert Fact.objects.filter(pk=int(world.my_shared_fact.removeprefix("mem_"))).exists()
    assert kept.structured_content["scope"] == "personal"
    assert not forgotten.is_error


def test_a_personal_job_made_with_full_access_cannot_be_turned_to_shared_memory_but_can_be_deleted(brain_url, world):
    with McpCaller(brain_url, world.token) as mcp:
        reprompted = mcp.call("update_job", {"id": world.my_org_job, "prompt": "Record a commitment."})
        moved = mcp.call("update_job", {"id": world.my_org_job, "memory": "personal", "prompt": "Note renewals."})
        job = Job.objects.get(pk=int(world.my_org_job.removeprefix("job_")))
        assert reprompted.is_error
        assert (job.memory, job.personal_only) == ("personal", True), moved.content[0].text
        deleted = mcp.call("update_job", {"id": world.my_org_job, "delete": True})
    assert not deleted.is_error
    assert not Job.objects.filter(pk=job.pk).exists()


# --- REST, and what a tool must declare ---------------------------------------------------


def test_the_rest_twins_refuse_the_same_writes(brain_url, world):
    headers = {"Authorization": f"Bearer {world.token}"}
    with httpx.Client(base_url=f"{brain_url}/api/v1", headers=headers) as http:
        commitment = http.post("/commitments/record", json={"owner": "Priya", "what": "Send the contract."})
        dropped = http.post(f"/commitments/{world.commitment}", json={"status": "dropped", "note": "Off."})
        document = http.post("/documents", json={"title": "Pricing", "content": "It costs 1 USD."})
        personal = http.post("/documents", json={"title": "My notes", "content": "Tea.", "scope": "personal"})
        job = http.post(
            "/jobs/recurring", json={"name": "x", "prompt": "y", "schedule": "0 9 * * 1", "scope": "shared"}
        )
    assert (commitment.status_code, dropped.status_code, document.status_code, job.status_code) == (403,) * 4
    assert "only store personal memories" in commitment.json()["message"]
    assert personal.status_code == 201
    assert Document.objects.get(pk=int(personal.json()["document_id"].removeprefix("doc_"))).scope == "personal"
    assert Commitment.objects.get(org=world.org).state == "open"


class NoArgs(ToolOutput):
    pass


def test_a_write_tool_that_says_nothing_of_what_it_writes_is_refused_to_personal_only_connections(db):
    from pydantic import BaseModel

    class Args(BaseModel):
        pass

    @mcp_tool("test_undeclared_write", title="Undeclared", args=Args, output=NoArgs, scope="write")
    def undeclared(actor, args):
        """Writes something, and does not say what."""
        return NoArgs()

    try:
        spec = TOOLS["test_undeclared_write"]
        assert spec.writes == "shared"
        org = make_org()
        with pytest.raises(PermissionDenied, match="only store personal memories"):
            authorise(make_actor(org, scopes=PERSONAL_ONLY), spec)
        authorise(make_actor(org, scopes="read,write"), spec)
        with pytest.raises(ValueError, match="read-only"):
            mcp_tool("test_reads", title="Reads", args=Args, output=NoArgs, writes="own")(undeclared)
        with pytest.raises(ValueError, match="writes must be one of"):
            mcp_tool("test_writes_else", title="Else", args=Args, output=NoArgs, scope="write", writes="org")(
                undeclared
            )
    finally:
        TOOLS.pop("test_undeclared_write")
