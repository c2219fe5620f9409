"""The organisations the isolation matrix runs in.

Organisation A holds what its member Mira may see and what she may not: a restricted board
category, a colleague's personal documents and memories. Its twin holds only what Mira may see,
written in the same order by the same roles. Organisation B holds secrets of its own. Whatever
Mira receives in A must be what her twin receives, apart from ids and times: then nothing she
gets depends on what she cannot see. A also holds a document and a memory of Mira's own that she
put in the trash: in the trash, they are hers no more than the board's are. In A, an admin has
also merged the board's Zorblatt into the Lindqvist deal of the mill notes, so an entity Mira sees
holds names and facts she may not.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.models import Group, User
from django.db.models import Q

from brain.core.actors import Actor
from brain.core.services import actor_for_token, add_member, create_organisation, create_token, start_activity
from brain.models import ApiToken, Category, Features, Membership, Organisation
from contacts.models import Contact
from contacts.services import save_contact_topics
from jobs.models import Job
from jobs.services import schedule_job
from memory.code_history.git import Commit, commit_document
from memory.documents.ingestion import ingest_documents
from memory.documents.placement import delete_document
from memory.documents.saving import add_document
from memory.graph.fixes import merge_entities
from memory.graph.memories import forget, remember
from memory.models import Chunk, Document, Entity, Fact, Mention
from registers.commitments.services import record_commitment
from registers.common import document_audience
from registers.contradictions.services import raise_contradiction
from registers.glossary.services import define_term
from registers.models import Commitment, Contradiction, Term
from skills.services import approve_version, publish_skill
from usage.models import Account

MISSING = 9_000_000_000  # ids from here on exist nowhere
KINDS = ("doc", "chunk", "mem", "ent", "con", "cmt", "ctr", "term", "job")  # numbered ids: <kind>_<pk>
REGISTER_KINDS = ("cmt", "ctr", "term", "job")  # entries made by tools rather than content
LITERAL_KINDS = ("ext", "slug", "path", "repo", "category", "act")  # hidden names, ids and slugs


@dataclass(frozen=True)
class Doc:
    label: str
    author: str
    title: str
    content: str
    hidden: bool = False
    category: str | None = None
    scope: str = "shared"
    source_kind: str = "api"
    external_id: str = ""
    metadata: dict[str, Any] | None = None
    occurred_at: datetime | None = None
    trashed: bool = False  # deleted by its author after it was read: in the trash


@dataclass(frozen=True)
class Memory:
    label: str
    author: str
    content: str
    hidden: bool = False
    scope: str = "shared"
    kind: str = "fact"
    subject: str | None = None
    entities: tuple[dict[str, str], ...] = ()
    trashed: bool = False  # forgotten by its author after it was read: in the trash


@dataclass(frozen=True)
class SkillItem:
    label: str
    author: str
    slug: str
    name: str
    description: str
    content: str
    category: str = "general"
    hidden: bool = False


@dataclass(frozen=True)
class ContactItem:
    label: str
    name: str
    topics: str
    hidden: bool = False


Item = Doc | Memory | SkillItem | ContactItem


def commit(
    label: str,
    author: str,
    *,
    repo: str,
    sha: str,
    subject: str,
    files: list[str],
    refs: list[str],
    who: tuple[str, str],
    hidden: bool = False,
    category: str | None = None,
) -> Doc:
    """A recorded git commit, saved the way ``memory.git_history`` saves one."""
    made = commit_document(
        Commit(
            sha=sha,
            author_name=who[0],
            author_email=who[1],
            subject=subject,
            body="",
            authored_at=datetime(2026, 2, 2, tzinfo=UTC),
            files=files,
            refs=refs,
            repo_name=repo,
        )
    )
    return Doc(
        label,
        author,
        made["title"],
        made["content"],
        hidden=hidden,
        category=category,
        source_kind="git",
        external_id=made["external_id"],
        metadata=made["metadata"],
        occurred_at=made["occurred_at"],
    )


# Every hidden title, name, summary and value holds one of these; Mira must never receive one.
SECRET_WORDS = (
    "Zorblatt", "Vexmoor", "Kelpfire", "Helena", "Nightjar", "Ostrava", "Thistlewood", "Marrowgate", "Glimmerwick",
    "Saltmarsh", "Quillmarsh", "Ferrovane", "Wrenfield", "4200000", "4,200,000", "95,000", "77,000",
    "Duskwater", "Pellucid", "63,000",
)  # fmt: skip

# Organisation A, in the order it is written. Hidden items are left out of the twin. Every entity
# Mira may see is first created by something she may see, so the twins number them alike.
CONTENT_A: tuple[Item, ...] = (
    Doc("handbook", "member", "Support handbook",
        "Priya Shah leads support since March 2026. Escalations go to Priya within one hour. Ms Quorvane joined the "
        "advisory board in January 2026 and reviews the loading dock plans.", external_id="wiki-support"),
    Memory("mill-budget", "colleague", "Brackwater Mill has its own budget line.", subject="Brackwater Mill"),
    Memory("colleague-entity", "colleague", "Remind me: the Brackwater Mill codename is Glimmerwick.", hidden=True,
           scope="personal", subject="Brackwater Mill",
           entities=({"name": "Brackwater Mill", "type": "project",
                      "summary": "Pilot site for the Glimmerwick tenants"},)),
    Doc("mill-notes", "colleague", "Brackwater Mill project notes",
        "The Brackwater Mill project ships the new loading dock in June 2026. Priya Shah reviews the Brackwater Mill "
        "schedule. The Lindqvist deal is worth $48,500."),
    Doc("board-memo", "reader", "Zorblatt acquisition memo",
        "Helena Quorvane became head of Vexmoor Labs on 3 March 2026. The Zorblatt acquisition is priced at "
        "$4,200,000. Helena Quorvane approved the Kelpfire budget.",
        hidden=True, category="board", source_kind="mcp", external_id="board-memo-7"),
    Doc("board-minutes", "reader", "Nightjar board minutes",
        "The Nightjar review found the Ostrava warehouse lease costs 18,000 EUR a month. Helena Quorvane wants the "
        "Nightjar numbers before PR #12 ships.", hidden=True, category="board", external_id="board-minutes-3"),
    Doc("diary", "colleague", "Thistlewood offer",
        "Thistlewood Partners offered me 95,000 GBP. I have not told anyone about Thistlewood yet.",
        hidden=True, scope="personal", source_kind="mcp", external_id="o-diary-1"),
    Doc("notes", "colleague", "Marrowgate notes", "My Marrowgate landlord raises the rent in May 2026.",
        hidden=True, scope="personal", external_id="o-notes-2"),
    Doc("reading", "member", "My reading list", "Finish the loading dock safety guide this week.", scope="personal"),
    Memory("fiscal", "member", "Our fiscal year starts in April.", subject="Fiscal year"),
    Memory("standups", "member", "I prefer stand-ups at 9:30.", scope="personal", kind="preference"),
    Memory("office", "colleague", "The office closes on 24 December.", subject="Office"),
    Memory("desk", "colleague", "I keep the Saltmarsh desk key in my drawer.", hidden=True, scope="personal"),
    commit("commit-shop", "member", repo="acme/shop", sha="a1" * 20, subject="Fix rounding in invoice totals (#12)",
           files=["src/billing/totals.py"], refs=["#12"], who=("Priya Shah", "priya@northwind.example")),
    commit("commit-vault", "reader", repo="acme/zorblatt-vault", sha="b2" * 20,
           subject="Rotate Zorblatt vault keys (#77)", files=["src/vault/zorblatt_keys.py", "src/billing/totals.py"],
           refs=["#77", "#12"], who=("Helena Quorvane", "helena@vexmoor.example"), hidden=True, category="board"),
    Doc("billing-chat", "colleague", "Billing channel", "PR #12 fixes the rounding bug customers reported."),
    SkillItem("deploy", "member", "deploy-guide", "Deploy guide", "How we ship the shop",
              "Step 1: build. Step 2: ship."),
    SkillItem("diligence", "reader", "zorblatt-diligence", "Zorblatt diligence", "Checklist for the Vexmoor deal",
              "Confirm the Kelpfire budget.", category="board", hidden=True),
    ContactItem("farah", "Farah Finance", "invoices, budgets, payroll, expenses"),
    # Mira's own, read into passages, facts and entities, then put in the trash by her: nobody reads
    # what is in the trash, its author included, until it is restored.
    Doc("binned", "member", "Duskwater launch plan",
        "The Duskwater launch moves to August 2026. Pellucid Systems quoted 63,000 EUR for the Duskwater kiosks.",
        hidden=True, trashed=True),
    Memory("forgotten", "member", "The Duskwater budget owner is Pellucid Systems.", hidden=True,
           subject="Duskwater", trashed=True),
)  # fmt: skip

CONTENT_B: tuple[Item, ...] = (
    Doc("b-pricing", "stranger", "Quillmarsh pricing",
        "Ferrovane Ltd signed the Quillmarsh plan for $77,000. Wrenfield Ostby leads the Quillmarsh rollout.",
        source_kind="mcp", external_id="quillmarsh-price-1"),
    Memory("b-renewal", "stranger", "Quillmarsh renews every March.", subject="Quillmarsh",
           entities=({"name": "Quillmarsh", "type": "product", "summary": "Ferrovane platform"},)),
    Memory("b-calls", "stranger", "Wrenfield prefers calls.", scope="personal"),
    commit("b-commit", "stranger", repo="acme/shop", sha="c3" * 20, subject="Quillmarsh export (#12)",
           files=["src/billing/totals.py"], refs=["#12"], who=("Wrenfield Ostby", "wrenfield@ferrovane.example")),
    SkillItem("b-playbook", "stranger", "quillmarsh-playbook", "Quillmarsh playbook", "Ferrovane onboarding",
              "Call Wrenfield first."),
    ContactItem("b-desk", "Quillmarsh Desk", "Ferrovane pricing and renewals"),
)  # fmt: skip

PEOPLE = {"member": ("Mira", "Member"), "colleague": ("Omar", "Colleague"), "reader": ("Rhea", "Reader"),
          "admin": ("Ada", "Admin"), "stranger": ("Wrenfield", "Stranger")}  # fmt: skip


@dataclass
class World:
    """One organisation: its people, what they wrote, and which of it its member may not see."""

    org: Organisation
    actors: dict[str, Actor]
    tokens: dict[str, str]
    items: dict[str, Any] = field(default_factory=dict)  # label -> Document, Fact, Skill slug or Contact
    hidden_labels: set[str] = field(default_factory=set)
    entries: dict[str, dict[str, int]] = field(default_factory=dict)  # register kind -> label -> pk, visible
    hidden_entries: dict[str, list[int]] = field(default_factory=dict)  # register kind -> pks its member may not see

    def actor(self, role: str) -> Actor:
        return self.actors[role]

    def refresh(self) -> None:
        """Actors as a fresh request would make them (writing marked the memory built, for one)."""
        self.org.refresh_from_db()
        for role, actor in self.actors.items():
            assert actor.token is not None, role
            token = ApiToken.objects.select_related("org").get(pk=actor.token.pk)
            self.actors[role] = actor_for_token(token, via="mcp")

    def add(self, item: Item) -> None:
        if item.hidden:
            self.hidden_labels.add(item.label)
        if isinstance(item, Doc):
            self.items[item.label] = _save(self.actor(item.author), item)
            if item.trashed:
                delete_document(actor=self.actor(item.author), document_id=self.items[item.label].pk)
        elif isinstance(item, Memory):
            self.items[item.label] = _remember(self.actor(item.author), item)
            if item.trashed:
                forget(actor=self.actor(item.author), memory_id=self.items[item.label].pk)
        elif isinstance(item, SkillItem):
            self.items[item.label] = _skill(self.actor(item.author), self.actor("admin"), item)
        else:
            self.items[item.label] = _contact(self.org, item)

    def documents(self, *, hidden: bool) -> list[Document]:
        """Documents in the order they were written; a memory counts by its document."""
        found = []
        for label, value in self.items.items():
            if (label in self.hidden_labels) == hidden and isinstance(value, Document | Fact):
                found.append(document_of(value))
        return found


def document_of(value: Document | Fact) -> Document:
    """A document, or the document a memory was stored in."""
    document = value if isinstance(value, Document) else value.document
    assert document is not None, value
    return document


def _save(actor: Actor, doc: Doc) -> Document:
    saved = add_document(
        actor=actor,
        title=doc.title,
        content=doc.content,
        source_kind=doc.source_kind,
        external_id=doc.external_id,
        metadata=doc.metadata,
        category=doc.category,
        scope=doc.scope,
        occurred_at=doc.occurred_at,
    )
    ingest_documents(document_ids=[saved.document.pk])
    return Document.objects.get(pk=saved.document.pk)


def _remember(actor: Actor, memory: Memory) -> Fact:
    fact = remember(
        actor=actor,
        content=memory.content,
        kind=memory.kind,
        subject=memory.subject,
        entities=list(memory.entities),
        scope=memory.scope,
    )
    assert fact.document_id is not None
    ingest_documents(document_ids=[fact.document_id])
    return Fact.objects.select_related("document").get(pk=fact.pk)


def _skill(author: Actor, admin: Actor, item: SkillItem) -> str:
    version = publish_skill(
        actor=author,
        slug=item.slug,
        name=item.name,
        content=item.content,
        description=item.description,
        categories=[item.category],
    )
    approve_version(actor=admin, version_id=version.pk)
    return item.slug


def _contact(org: Organisation, item: ContactItem) -> Contact:
    made = Contact.objects.create(
        org=org, name=item.name, topics=item.topics, channels=["email"], email=f"{item.label}@northwind.example"
    )
    save_contact_topics(made)
    return made


def _world(slug: str, name: str, roles: tuple[str, ...]) -> World:
    org = create_organisation(slug=slug, name=name)
    # Credits to spare: the matrix compares what calls return, so none may run out midway.
    Account.objects.filter(org=org).update(credits=1_000_000)
    board = Category.objects.create(org=org, slug="board", name="Board", restricted=True)
    group = Group.objects.create(name=f"board-{slug}")
    board.groups.add(group)
    actors, tokens = {}, {}
    for role in roles:
        first, last = PEOPLE[role]
        user = User.objects.create_user(
            username=f"{role}-{slug}", email=f"{role}@{name.lower()}.example", first_name=first, last_name=last
        )
        add_member(org=org, user=user, role=Membership.ADMIN if role == "admin" else Membership.MEMBER)
        if role == "reader":
            user.groups.add(group)
        issued = create_token(org=org, user=user, scopes=["read", "write"])
        actors[role], tokens[role] = actor_for_token(issued.token, via="mcp"), issued.plaintext
    return World(org=org, actors=actors, tokens=tokens)


# --- register entries: alike in A and its twin where the member may read them ----------------------


def _switch_registers_on(world: World) -> None:
    Features.objects.filter(org=world.org).update(commitments=True, contradictions=True, glossary=True, jobs=True)


def _pair(actor: Actor, about: str, a: Fact, b: Fact) -> int:
    return raise_contradiction(
        actor=actor,
        question=f"Which holds: {a.statement} or {b.statement}?",
        about=about,
        claim_a=a.statement,
        source_a="memory",
        claim_b=b.statement,
        source_b="memory",
        memory_id_a=a.public_id,
        memory_id_b=b.public_id,
    ).pk


def _definition(term: Term) -> Fact:
    """The memory a definition became, ingested like every other memory of the world."""
    assert term.memory is not None
    assert term.memory.document_id is not None
    ingest_documents(document_ids=[term.memory.document_id])
    return Fact.objects.select_related("document").get(pk=term.memory.pk)


def add_visible_entries(world: World) -> None:
    _switch_registers_on(world)
    colleague = world.actor("colleague")
    promise = record_commitment(
        actor=colleague, owner="Omar", what="Omar will send the loading dock plan to Priya Shah"
    )
    words = raise_contradiction(
        actor=colleague,
        question="Does the loading dock open at 7 or at 8?",
        about="loading dock opening hours",
        claim_a="The loading dock opens at 7.",
        source_a="Support handbook",
        claim_b="The loading dock opens at 8.",
        source_b="Brackwater Mill project notes",
    )
    facts = _pair(colleague, "Brackwater Mill and the office", world.items["mill-budget"], world.items["office"])
    term = define_term(actor=colleague, term="loading dock", definition="The north gate of Brackwater Mill.")
    world.items["dock-term-memory"] = _definition(term)
    shared_job = schedule_job(
        actor=colleague,
        name="Dock digest",
        prompt="What changed about the loading dock?",
        schedule="0 9 * * 1",
        scope="shared",
    ).job
    world.entries = {"cmt": {"dock-promise": promise.pk}, "ctr": {"dock-hours": words.pk, "mill-office": facts},
                     "term": {"dock-term": term.pk}, "job": {"dock-digest": shared_job.pk}}  # fmt: skip


def add_hidden_entries(world: World) -> None:
    """In A only: a promise read from a board memo and one from a colleague's diary, and pairs with a
    board fact or a colleague's personal memory on one side."""
    memo, diary = world.items["board-memo"], world.items["diary"]
    made = [
        Commitment.objects.create(org=world.org, owner_name="Helena Quorvane", promised_on=memo.recorded_at.date(),
                                  what="Helena Quorvane will sign the Zorblatt offer", document=memo,
                                  origin="extracted", **document_audience(memo)),
        Commitment.objects.create(org=world.org, owner_name="Omar", promised_on=diary.recorded_at.date(),
                                  what="Omar will answer Thistlewood Partners", document=diary, origin="extracted",
                                  **document_audience(diary)),
    ]  # fmt: skip
    board_fact = Fact.objects.filter(document=memo).order_by("pk").first()
    assert board_fact is not None, "the board memo gives facts"
    pairs = [
        _pair(world.actor("reader"), "Zorblatt and the mill budget", board_fact, world.items["mill-budget"]),
        _pair(world.actor("colleague"), "Saltmarsh desk and the office", world.items["desk"], world.items["office"]),
    ]
    reminder = "Remind me to answer Thistlewood Partners about the 95,000 GBP offer."
    private = schedule_job(
        actor=world.actor("colleague"), name="Thistlewood reply", schedule="0 8 * * 2", prompt=reminder
    ).job
    world.hidden_entries = {"cmt": [c.pk for c in made], "ctr": pairs, "job": [private.pk]}


def merge_a_hidden_name_into_a_visible_entity(world: World) -> None:
    """In A only: an admin decides that the board's Zorblatt is the Lindqvist deal of the mill notes
    and merges it in. The entity Mira sees then holds the board's mentions, facts and values and the
    alias "Zorblatt"; she must still be shown exactly what her twin, where there is no board, is shown."""
    kept = Mention.objects.filter(document=world.items["mill-notes"], surface="Lindqvist").first()
    merged = Mention.objects.filter(document=world.items["board-memo"], surface="Zorblatt").first()
    assert kept is not None, "the mill notes name the Lindqvist deal"
    assert merged is not None, "the board memo names Zorblatt"
    assert kept.entity_id != merged.entity_id, "two entities to merge"
    merge_entities(actor=world.actor("admin"), kept_id=kept.entity_id, merged_id=merged.entity_id)


def add_entries_of_b(world: World) -> None:
    _switch_registers_on(world)
    stranger = world.actor("stranger")
    promise = record_commitment(
        actor=stranger, owner="Wrenfield Ostby", what="Wrenfield Ostby will send the Quillmarsh quote"
    )
    words = raise_contradiction(
        actor=stranger,
        question="Is Quillmarsh $77,000 or $79,000?",
        about="Quillmarsh plan price",
        claim_a="Quillmarsh costs $77,000.",
        source_a="Quillmarsh pricing",
        claim_b="Quillmarsh costs $79,000.",
        source_b="Ferrovane call",
    )
    term = define_term(actor=stranger, term="Quillmarsh", definition="Ferrovane's platform plan.")
    world.items["b-term-memory"] = _definition(term)
    world.hidden_labels.add("b-term-memory")
    job = schedule_job(
        actor=stranger,
        name="Quillmarsh renewals",
        prompt="Chase Ferrovane about Quillmarsh.",
        schedule="0 9 * * 3",
        scope="shared",
    ).job
    world.hidden_entries = {"cmt": [promise.pk], "ctr": [words.pk], "term": [term.pk], "job": [job.pk]}


@dataclass
class Worlds:
    a: World
    twin: World
    b: World
    b_activity: str

    def delete(self) -> None:
        users = [actor.user.pk for w in (self.a, self.twin, self.b) for actor in w.actors.values()]
        Organisation.objects.filter(pk__in=[w.org.pk for w in (self.a, self.twin, self.b)]).delete()
        User.objects.filter(pk__in=users).delete()
        Group.objects.filter(name__in=[f"board-{w.org.slug}" for w in (self.a, self.twin, self.b)]).delete()


def clear_leftovers() -> None:
    """What an interrupted run left behind; other tests count rows and would trip over it."""
    Organisation.objects.filter(slug__startswith="iso-").delete()
    User.objects.filter(username__contains="-iso-").delete()
    Group.objects.filter(name__startswith="board-iso-").delete()


def build_worlds() -> Worlds:
    clear_leftovers()
    run = uuid.uuid4().hex[:8]
    roles = ("member", "colleague", "reader", "admin")
    a, twin = _world(f"iso-a-{run}", "Northwind", roles), _world(f"iso-t-{run}", "Northwind", roles)
    b = _world(f"iso-b-{run}", "Southwind", ("stranger", "admin"))
    for item in CONTENT_B:
        b.add(item)
    b.hidden_labels = set(b.items)  # all of B is hidden from A's member
    for item in CONTENT_A:
        a.add(item)
        if not item.hidden:
            twin.add(item)
    for world in (a, twin):
        add_visible_entries(world)
    add_hidden_entries(a)
    merge_a_hidden_name_into_a_visible_entity(a)
    add_entries_of_b(b)
    activity = start_activity(actor=b.actor("stranger"), label="Quillmarsh renewal").public_id
    for world in (a, twin, b):
        world.refresh()
    return Worlds(a=a, twin=twin, b=b, b_activity=activity)


# --- what the member may and may not see, by construction ----------------------------------


def visible_entity_keys(world: World) -> dict[tuple[str, str], int]:
    """The member's entities, keyed by (document label, surface form) so that the twin's match."""
    keys: dict[tuple[str, str], int] = {}
    for label, value in world.items.items():
        if label in world.hidden_labels or not isinstance(value, Document | Fact):
            continue
        document = value if isinstance(value, Document) else value.document
        for mention in Mention.objects.filter(document=document).order_by("surface", "pk"):
            keys.setdefault((label, mention.surface), mention.entity_id)
        for fact in Fact.objects.filter(document=document).order_by("pk"):
            for end, entity_id in (("subject", fact.subject_id), ("object", fact.object_id)):
                if entity_id is not None:
                    keys.setdefault((label, f"{end}:{fact.statement}"), entity_id)
    return keys


@dataclass(frozen=True)
class Sight:
    """What a member may see, keyed so that twins match (a document by its label, a passage by its
    document and position, a fact by its document and statement, an entity by where it is named),
    and the ids of A and B they may not see (the twin is never attacked)."""

    visible: dict[str, dict[Any, int]]
    hidden: dict[str, list[int]]
    hidden_literals: dict[str, list[str]]
    names: dict[tuple[str, int], str]  # (kind, pk) -> what it is, for failure reports


def visible_keys(world: World) -> dict[str, dict[Any, int]]:
    docs = {
        label: document_of(v)
        for label, v in world.items.items()
        if label not in world.hidden_labels and isinstance(v, Document | Fact)
    }
    chunks = {(label, c.ordinal): c.pk for label, d in docs.items() for c in Chunk.objects.filter(document=d)}
    facts = {(label, f.statement): f.pk for label, d in docs.items() for f in Fact.objects.filter(document=d)}
    contacts = {label: v.pk for label, v in world.items.items() if isinstance(v, Contact)}
    return {"doc": {label: d.pk for label, d in docs.items()}, "chunk": chunks, "mem": facts,
            "ent": visible_entity_keys(world), "con": contacts,
            **{kind: dict(world.entries.get(kind, {})) for kind in REGISTER_KINDS}}  # fmt: skip


def sight_of(worlds: Worlds, world: World) -> Sight:
    a, b = worlds.a, worlds.b
    hidden_docs = [*a.documents(hidden=True), *b.documents(hidden=True)]
    seen_entities = set(visible_entity_keys(a).values())
    hidden = {
        "doc": [d.pk for d in hidden_docs],
        "chunk": list(Chunk.objects.filter(document__in=hidden_docs).order_by("pk").values_list("pk", flat=True)),
        "mem": list(Fact.objects.filter(document__in=hidden_docs).order_by("pk").values_list("pk", flat=True)),
        "ent": list(Entity.objects.filter(org__in=[a.org, b.org]).exclude(pk__in=seen_entities).order_by("pk")
                    .values_list("pk", flat=True)),
        "con": [v.pk for v in b.items.values() if isinstance(v, Contact)],
        **{kind: [*a.hidden_entries.get(kind, []), *b.hidden_entries.get(kind, [])] for kind in REGISTER_KINDS},
    }  # fmt: skip
    replayable = [d for d in hidden_docs if d.external_id]
    literals = {
        "ext": [d.external_id for d in replayable],
        "ext-source": [d.source_kind for d in replayable],
        "title": [d.title for d in replayable],
        "content": [d.content for d in replayable],
        "slug": [v for w in (a, b) for k, v in w.items.items() if k in w.hidden_labels and isinstance(v, str)],
        "path": ["src/vault/zorblatt_keys.py"],
        "repo": ["acme/zorblatt-vault"],
        "category": ["board"],
        "act": [worlds.b_activity],
    }
    return Sight(
        visible=visible_keys(world), hidden=hidden, hidden_literals=literals, names=_names(hidden_docs, hidden)
    )


def _names(hidden_docs: list[Document], hidden: dict[str, list[int]]) -> dict[tuple[str, int], str]:
    names: dict[tuple[str, int], str] = {
        ("doc", d.pk): f"{d.title!r} ({d.scope}, {d.category.slug})" for d in hidden_docs
    }
    for chunk in Chunk.objects.filter(pk__in=hidden["chunk"]).select_related("document"):
        names["chunk", chunk.pk] = f"passage of {chunk.document.title!r}"
    for fact in Fact.objects.filter(pk__in=hidden["mem"]).select_related("document"):
        names["mem", fact.pk] = f"{fact.source} {fact.scope} fact {fact.statement[:50]!r}"
    for entity in Entity.objects.filter(pk__in=hidden["ent"]):
        names["ent", entity.pk] = f"entity {entity.name!r}"
    return names


def all_ids(kind: str, worlds: Worlds) -> list[int]:
    """Every id of a kind in the three organisations, for enumerating the ids around them."""
    orgs = [w.org for w in (worlds.a, worlds.twin, worlds.b)]
    models: dict[str, Any]
    models = {"doc": Document, "chunk": Chunk, "mem": Fact, "ent": Entity, "con": Contact, "cmt": Commitment,
              "ctr": Contradiction, "term": Term, "job": Job}  # fmt: skip
    model = models[kind]
    return list(model.objects.filter(Q(org__in=orgs)).values_list("pk", flat=True))
