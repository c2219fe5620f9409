"""Rows for the overview tests: calls on given days, failed documents, misses."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User

from brain.core.actors import Actor
from brain.models import Organisation, ToolCall
from memory.models import Document
from memory.tests.factories import save
from usage.models import Miss


def called(org: Organisation, at: datetime, tool: str = "search_company_memory", *, user: User | None = None,
           n: int = 1, **fields: Any) -> None:  # fmt: skip
    ToolCall.objects.bulk_create(
        ToolCall(org=org, user=user, tool=tool, via="mcp", started_at=at, **fields) for _ in range(n)
    )


def failed(actor: Actor, title: str, error: str = "the parser gave up", **kw: Any) -> Document:
    document = save(actor, title, f"{title}: some content", ingest=False, **kw)
    Document.objects.filter(pk=document.pk).update(status=Document.Status.FAILED, error=error, attempts=3)
    document.refresh_from_db()
    return document


def missed(org: Organisation, question: str, *, user: User | None = None, **kw: Any) -> Miss:
    return Miss.objects.create(org=org, user=user, tool="search_company_memory", question=question, **kw)


def one_of_each_waiting(org: Organisation, *, requester: User) -> None:
    """One piece of each kind of work waiting for people (brain.core.needs), beside some that is done."""
    from conftest import make_actor
    from contacts.models import Contact, HumanRequest
    from registers.models import Contradiction
    from registers.tests.helpers import switch_on
    from skills.models import Skill, SkillVersion

    skill = Skill.objects.create(org=org, slug="onboarding")
    SkillVersion.objects.create(skill=skill, name="Onboarding", content="Do this.")
    SkillVersion.objects.create(skill=skill, name="Onboarding", content="Old.", status=SkillVersion.Status.APPROVED)
    contact = Contact.objects.create(org=org, name="Farah", topics="budgets", email="f@example.com", channels=["email"])
    for status in ("sent", "answered"):
        HumanRequest.objects.create(org=org, requester=requester, contact=contact, channel="email", question="?",
                                    status=status)  # fmt: skip
    switch_on(org, "contradictions")
    Contradiction.objects.create(org=org, about="price", question="Which?", claim_a="a", source_a="x", claim_b="b",
                                 source_b="y")  # fmt: skip
    failed(make_actor(org), "Q3 board pack")
