"""The three registers. Every entry carries the audience (category, scope, owner) of what it was
taken from, and lists filter on it with the memory's own rule (``memory.access.readable``): an
entry never shows a reader anything derived from a source they may not read."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from brain.infra.ids import format_id
from brain.models import Category, Organisation
from memory.models import Chunk, Document, Entity, Fact, Scope


class Audience(models.Model):
    """Who may read an entry: the same three columns as a document, chunk or fact."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    category = models.ForeignKey(Category, on_delete=models.RESTRICT, related_name="+")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.SHARED)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class Commitment(Audience):
    class State(models.TextChoices):
        OPEN = "open"
        LANDED = "landed"
        CANCELLED = "cancelled"

    class Origin(models.TextChoices):
        EXTRACTED = "extracted", "read from meeting notes or chat"
        RECORDED = "recorded", "recorded by a person"

    owner_name = models.CharField(max_length=200, help_text="The person or team, as the text names them.")
    owner_entity = models.ForeignKey(Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    what = models.CharField(max_length=300, help_text="One line, third person, with its figures and names.")
    due_on = models.DateField(null=True, blank=True, help_text="Only when a deadline was given.")
    promised_on = models.DateField()
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    made_in = models.CharField(max_length=300, blank=True, help_text="Where it was made, when not a document.")
    quote = models.TextField(blank=True, help_text="The words it was read from.")
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.RECORDED)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    note = models.CharField(max_length=500, blank=True, help_text="What the settled state rests on.")
    settled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    settled_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # One entry per promise read from a document: reading it again finds the same key.
    fingerprint = models.CharField(max_length=64, blank=True)
    # Its dates were read against the day its document was saved, as the document says nowhere when
    # the promise was made: shown on the commitment so a person can correct them.
    dated_from_upload = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["due_on", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["org", "fingerprint"], name="commitment_unique_fingerprint", condition=~models.Q(fingerprint="")
            )
        ]
        indexes = [models.Index(fields=["org", "state", "due_on"], name="commitment_org_state")]

    def __str__(self) -> str:
        return self.what

    @property
    def public_id(self) -> str:
        return f"cmt_{self.pk}"

    def is_overdue(self, today: object) -> bool:
        return self.state == self.State.OPEN and self.due_on is not None and self.due_on < today  # type: ignore[operator]


class CommitmentSource(models.Model):
    """A further place a commitment was said: the same promise read again from another document
    (registers.commitments.twins). It has the commitment's audience, so whoever reads the
    commitment may read it; what that place said is kept as it was said there."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    commitment = models.ForeignKey(Commitment, on_delete=models.CASCADE, related_name="sources")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    what = models.CharField(max_length=300)
    due_on = models.DateField(null=True, blank=True)
    promised_on = models.DateField()
    quote = models.TextField(blank=True)
    # The key the promise has in this document (as Commitment.fingerprint): reading it again adds nothing.
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["promised_on", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["org", "fingerprint"], name="commitment_source_unique_fingerprint")
        ]

    def __str__(self) -> str:
        return self.what


class Verdict(models.Model):
    """One night's look for evidence that a commitment landed: what was searched and what was found."""

    commitment = models.ForeignKey(Commitment, on_delete=models.CASCADE, related_name="verdicts")
    checked_at = models.DateTimeField(default=timezone.now)
    looked_for = models.CharField(max_length=500)
    found = models.JSONField(default=list, help_text="References: passages and facts that suggest it landed.")
    suggests_landed = models.BooleanField(default=False)
    summary = models.CharField(max_length=500)

    class Meta:
        ordering = ["-checked_at", "-pk"]

    def __str__(self) -> str:
        return self.summary


class Contradiction(models.Model):
    """Two statements that cannot both hold. A reader sees it only if they may read each fact
    behind it (``registers.contradictions.services``); a fact that is deleted takes it along."""

    class State(models.TextChoices):
        OPEN = "open"
        RESOLVED = "resolved"
        DISMISSED = "dismissed"

    class Severity(models.TextChoices):
        HIGH = "high", "high: someone could act wrongly on it today"
        MEDIUM = "medium"
        LOW = "low"

    class Answer(models.TextChoices):
        A = "a", "a stands, b is superseded"
        B = "b", "b stands, a is superseded"
        C = "c", "c stands, the others are superseded"
        D = "d", "d stands, the others are superseded"
        E = "e", "e stands, the others are superseded"
        F = "f", "f stands, the others are superseded"
        BOTH = "both", "both are true"
        NEITHER = "neither", "they never disagreed"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    about = models.CharField(max_length=80, help_text="What it is about, in three to six words.")
    question = models.CharField(max_length=500)
    subject = models.CharField(max_length=200, blank=True)
    claim_a = models.CharField(max_length=1000)
    source_a = models.CharField(max_length=300)
    date_a = models.DateField(null=True, blank=True)
    fact_a = models.ForeignKey(Fact, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    claim_b = models.CharField(max_length=1000)
    source_b = models.CharField(max_length=300)
    date_b = models.DateField(null=True, blank=True)
    fact_b = models.ForeignKey(Fact, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # One thing stated three or more ways is one entry: the statements after a and b, labelled c, d...
    # each {"fact": id, "claim", "source", "date"}, of the same audience as a.
    more = models.JSONField(default=list, blank=True, help_text="Further statements of the same thing (c, d, ...).")
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.MEDIUM)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    answer = models.CharField(max_length=8, choices=Answer.choices, blank=True)
    note = models.CharField(max_length=500, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    raised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The pair of facts, smaller id first, for pairs found by the nightly scan: never the same twice.
    pair = models.CharField(max_length=60, blank=True)
    # The same disagreement (one thing, the same two claims, each side read by the same people) found
    # again in another pair of facts is a twin of the first entry: listed once, answered together
    # (registers.contradictions.twins).
    twin_key = models.CharField(max_length=64, blank=True)
    twin_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="twins")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["org", "pair"], name="contradiction_unique_pair", condition=~models.Q(pair="")
            )
        ]
        indexes = [
            models.Index(fields=["org", "state", "severity"], name="contradiction_org_state"),
            models.Index(fields=["org", "twin_key"], name="contradiction_twin", condition=~models.Q(twin_key="")),
        ]

    def __str__(self) -> str:
        return self.about

    @property
    def public_id(self) -> str:
        return f"ctr_{self.pk}"


class Term(models.Model):
    """A word of the organisation's. Candidates come only from text every member may read, so a
    term and its examples are shared by the whole organisation."""

    class State(models.TextChoices):
        DEFINED = "defined"
        OPEN = "open"
        DISMISSED = "dismissed"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    term = models.CharField(max_length=120, help_text="As the organisation writes it.")
    key = models.CharField(max_length=120, help_text="The term folded to lower case, for lookups.")
    kind = models.CharField(max_length=16, blank=True, help_text="acronym, name or term_of_art, when found in text.")
    definition = models.CharField(max_length=500, blank=True, help_text="A pointer, in one sentence.")
    suggestion = models.CharField(max_length=500, blank=True, help_text="A definition found in the text, unconfirmed.")
    senses = models.PositiveSmallIntegerField(default=1)
    uses = models.PositiveIntegerField(default=0)
    examples = models.JSONField(default=list, help_text="A few uses: sentence and the passage it is in.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    note = models.CharField(max_length=500, blank=True)
    memory = models.ForeignKey(Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # A member's proposed definition, waiting for an admin to accept or reject it, with the passage
    # it rests on when they cited one (shown only to those who may read that passage).
    proposal = models.CharField(max_length=500, blank=True, help_text="A definition a member proposed, unconfirmed.")
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    proposed_at = models.DateTimeField(null=True, blank=True)
    proposal_passage = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    defined_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    defined_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["key"]
        constraints = [models.UniqueConstraint(fields=["org", "key"], name="term_unique_key")]

    def __str__(self) -> str:
        return self.term

    @property
    def public_id(self) -> str:
        return format_id("term", self.pk)


class Scan(models.Model):
    """How far a register's nightly scan of an organisation has read: it resumes after ``last_id``."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    register = models.CharField(max_length=16)
    last_id = models.BigIntegerField(default=0, help_text="The highest chunk or fact id read so far.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "register"], name="scan_unique_register")]

    def __str__(self) -> str:
        return f"{self.register} of {self.org.slug} up to {self.last_id}"
