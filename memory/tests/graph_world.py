"""A small organisation for the graph's fixes: a board paper naming Helena Quorvane, open notes
naming Ms Quorvane, a member, a board reader and an admin."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group

from brain.core.actors import Actor
from brain.models import Category, Membership, Organisation, OrganisationGroup
from conftest import make_actor, make_org, make_user
from memory.extraction.shapes import ExtractedValue
from memory.graph.writes import FactDraft, record_facts
from memory.models import Document, Entity, Fact, Mention
from memory.tests.factories import save


@dataclass
class GraphWorld:
    org: Organisation
    admin: Actor
    member: Actor
    reader: Actor  # may read the board category
    board_fact: Fact
    open_facts: list[Fact]

    def entity(self, surface: str) -> Entity:
        """The one entity the organisation's sources name ``surface``."""
        [entity_id] = set(
            Mention.objects.filter(document__org=self.org, surface=surface).values_list("entity_id", flat=True)
        )
        return Entity.objects.get(pk=entity_id)


def stated(actor: Actor, title: str, draft: FactDraft, *, category: str | None = None) -> Fact:
    """One document stating one fact, recorded as extraction would record it."""
    document = save(actor, title, draft.statement, ingest=False, category=category)
    Document.objects.filter(pk=document.pk).update(status="ready")
    document.refresh_from_db()
    return record_facts(document=document, drafts=[draft])[0]


def board_category(org: Organisation, *readers: Actor) -> Category:
    group = Group.objects.create(name=f"{org.slug}-board")
    OrganisationGroup.objects.create(group=group, org=org)
    board = Category.objects.create(org=org, slug="board", name="Board", restricted=True)
    board.groups.add(group)
    for reader in readers:
        reader.user.groups.add(group)
    return board


def graph_world(org: Organisation | None = None) -> GraphWorld:
    org = org or make_org()
    admin = make_actor(org, make_user(org, role=Membership.ADMIN))
    member, reader = make_actor(org), make_actor(org)
    board_category(org, reader)
    # The board paper first: the open notes cannot link to a name only the board reads.
    board = stated(
        reader,
        "Board memo",
        FactDraft(
            statement="Helena Quorvane became head of Vexmoor Labs.",
            subject="Helena Quorvane",
            object="Vexmoor Labs",
            relation="head_of",
            single_valued=True,
        ),
        category="board",
    )
    joined = stated(
        member, "Advisory board", FactDraft(statement="Ms Quorvane joined the advisory board.", subject="Ms Quorvane")
    )
    budget = stated(
        member,
        "Dock plans",
        FactDraft(
            statement="Ms Quorvane holds a dock budget of 5000 EUR.",
            subject="Ms Quorvane",
            values=[ExtractedValue("budget", number=5000, unit="EUR")],
        ),
    )
    return GraphWorld(org=org, admin=admin, member=member, reader=reader, board_fact=board, open_facts=[joined, budget])
