"""Documents (episodes) and their searchable chunks."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, HashIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.functions import Lower, Upper
from django.utils import timezone
from pgvector.django import VectorField

from brain.infra.ids import format_id
from brain.models import Category, Organisation, Reviewed
from memory.limits import FIELD_CHARS

EMBEDDING_DIMENSIONS = 384


class Scope(models.TextChoices):
    SHARED = "shared", "Shared with the organisation"
    PERSONAL = "personal", "Personal to its owner"


class Document(Reviewed):
    class Status(models.TextChoices):
        QUEUED = "queued"
        WAITING = "waiting"  # ingestion paused, or out of credits; resumes by itself
        PROCESSING = "processing"
        READY = "ready"
        FAILED = "failed"

    class Extraction(models.TextChoices):
        """How learning facts from a ready document went; its passages are searchable meanwhile."""

        NONE = "", "not extracted"  # extraction is off, or the document is a remembered fact
        PENDING = "pending"  # to do, or to try again (the sweep does)
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"  # given up after BRAIN_INGEST_MAX_ATTEMPTS tries; the reason is kept

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=FIELD_CHARS["title"])
    content = models.TextField()
    content_type = models.CharField(max_length=40, default="text/plain")
    source_kind = models.CharField(max_length=40, default="api")
    source_url = models.CharField(max_length=FIELD_CHARS["source_url"], blank=True)
    external_id = models.CharField(max_length=FIELD_CHARS["external_id"], blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    category = models.ForeignKey(Category, on_delete=models.RESTRICT, related_name="documents")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.SHARED)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    claim = models.CharField(max_length=80, blank=True, help_text="Who is processing it now.")
    claimed_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    previous = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="The version it replaces."
    )
    recorded_at = models.DateTimeField(default=timezone.now)
    occurred_at = models.DateTimeField(null=True, blank=True, help_text="When the content speaks from.")
    # A document that is one message or turn of a conversation says who spoke and in which
    # conversation and session (a chat channel and day, a meeting); its time is occurred_at.
    speaker = models.CharField(
        max_length=FIELD_CHARS["speaker"], blank=True, db_default="", help_text="Who said it, when it is one message."
    )
    conversation = models.CharField(
        max_length=FIELD_CHARS["conversation"], blank=True, db_default="", help_text="The conversation it belongs to."
    )
    session = models.CharField(
        max_length=FIELD_CHARS["session"], blank=True, db_default="", help_text="The sitting of that conversation."
    )
    processed_at = models.DateTimeField(null=True, blank=True)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    chunk_count = models.PositiveIntegerField(default=0)
    extraction = models.CharField(
        max_length=16, choices=Extraction.choices, blank=True, default=Extraction.NONE, db_default=Extraction.NONE
    )
    extraction_error = models.TextField(blank=True, default="", db_default="")
    extraction_attempts = models.PositiveIntegerField(default=0, db_default=0)
    extraction_tried_at = models.DateTimeField(null=True, blank=True)
    length = models.PositiveIntegerField(default=0, db_default=0, help_text="Characters of content (its lane).")
    # In the trash since then (``memory.documents.trash``): nobody reads it, its passages or its facts
    # (``memory.access``), until it is restored or purged at the end of the organisation's period.
    trashed_at = models.DateTimeField(null=True, blank=True)
    trashed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        indexes = [
            models.Index(fields=["org", "status"], name="document_org_status"),
            # What is stale, and whose: the Needs-you list and the overview read current rows by due day.
            models.Index(
                fields=["org", "review_due_on"],
                name="document_review_due",
                condition=models.Q(review_due_on__isnull=False, superseded_at__isnull=True),
            ),
            # The extraction sweep reads only the few documents whose extraction is not settled.
            models.Index(
                fields=["extraction"],
                name="document_extraction_open",
                condition=models.Q(extraction__in=["pending", "running"]),
            ),
            models.Index(fields=["org", "-recorded_at"], name="document_org_recorded"),
            models.Index(fields=["org", "source_kind", "external_id"], name="document_external_id"),
            # The message before a message in its conversation (memory.documents.turns).
            models.Index(
                fields=["org", "conversation", "occurred_at", "id"],
                name="document_conversation",
                condition=~models.Q(conversation=""),
            ),
            # The documents on their way and the ones that failed, by status and age: what /metrics
            # counts at each scrape (overview.metrics) without reading the ready ones, most of the table.
            models.Index(
                fields=["status", "recorded_at"],
                name="document_unsettled",
                condition=models.Q(status__in=["queued", "waiting", "processing", "failed"]),
            ),
            # The queue a worker claims from fairly (memory.documents.lanes).
            models.Index(fields=["org", "length", "id"], name="document_queued", condition=models.Q(status="queued")),
            models.Index(fields=["org", "claimed_at"], name="document_org_claimed"),
            # The trash pages and the nightly purge read only what is in the trash.
            models.Index(
                fields=["org", "trashed_at"], name="document_trashed", condition=models.Q(trashed_at__isnull=False)
            ),
            # A save without an external id looks for its twin by content (memory.documents.saving).
            models.Index(
                fields=["org", "content_hash"], name="document_content", condition=models.Q(superseded_at__isnull=True)
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def public_id(self) -> str:
        return format_id("doc", self.pk)


class Upload(models.Model):
    """A file a member added on the Add knowledge page, kept as sent until a worker reads it into
    documents under the reading budget (memory.upload.reading); the page follows it by this row."""

    Status = Document.Status

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=240)
    data = models.BinaryField(help_text="The file as sent; emptied once it is read.")
    size = models.PositiveIntegerField(default=0)
    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.SHARED)
    status = models.CharField(max_length=16, choices=Document.Status.choices, default=Document.Status.QUEUED)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    claim = models.CharField(max_length=80, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    document_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, help_text="What it was read into.")

    class Meta:
        indexes = [models.Index(fields=["status", "created_at"], name="upload_status")]

    def __str__(self) -> str:
        return self.name


class Chunk(models.Model):
    """A passage of a document. Access and time columns are copied from the document so that the
    retrieval SQL filters on the chunk row alone."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    title = models.CharField(max_length=240)
    heading = models.CharField(max_length=500, blank=True)
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    embedding_model = models.CharField(max_length=200, blank=True, help_text="The model that computed the vector.")
    # During a switch of models, the upcoming model's vector (memory.index.serving); empty otherwise.
    next_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    next_embedding_model = models.CharField(max_length=200, blank=True, db_default="")
    # A passage that is one speaker's turn: who spoke and when (both also in its embedded text).
    speaker = models.CharField(max_length=200, blank=True, db_default="")
    said_at = models.DateTimeField(null=True, blank=True)
    search = models.GeneratedField(
        expression=SearchVector("title", weight="A", config="english")
        + SearchVector("speaker", weight="A", config="english")
        + SearchVector("heading", weight="B", config="english")
        + SearchVector("text", weight="C", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    category = models.ForeignKey(Category, on_delete=models.RESTRICT, related_name="+")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.SHARED)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    recorded_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True, blank=True)
    trashed_at = models.DateTimeField(null=True, blank=True, help_text="Its document's, while in the trash.")

    class Meta:
        # No HNSW or GIN index here: each large organisation has its own (memory.index.org_indexes).
        indexes = [
            models.Index(fields=["org", "document", "ordinal"], name="chunk_org_document"),
            models.Index(fields=["org", "speaker"], name="chunk_org_speaker", condition=~models.Q(speaker="")),
            models.Index(
                fields=["org", "said_at"], name="chunk_org_said_at", condition=models.Q(said_at__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.title} #{self.ordinal}"

    @property
    def public_id(self) -> str:
        return format_id("chunk", self.pk)


class DocumentBlock(models.Model):
    """One block of a document as ingestion read it (``memory.extraction.Block``): a heading,
    paragraph, list item, table row, quote, code, signature, greeting, header lines or a turn, with
    where it stands in the text and the headings above it. Read once, kept with the passages, so
    what reads the document later (facts, promises, its page) does not parse it again."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="blocks")
    position = models.PositiveIntegerField()
    kind = models.CharField(max_length=16)
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    path = ArrayField(models.TextField(), default=list, blank=True)
    # What only some kinds have: an item's lead-in, a row's header, cells and subject column, a
    # turn's speaker and time.
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "position"], name="document_block_position")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.position}"


class Entity(models.Model):
    """A person, team, customer, deal, project, system or term the organisation's knowledge names."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="entities")
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=40, default="other")
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    summary = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # An admin's type is shown to every reader instead of the type the sources give (memory.graph.fixes).
    type_fixed = models.BooleanField(default=False, db_default=False, help_text="An admin chose the type.")
    # A merged entity is retired, not deleted: nobody is shown it, and undoing the merge brings it back.
    merged_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Retired: merged into this entity.",
    )

    class Meta:
        verbose_name_plural = "entities"
        # Names are not unique: one name may stand for an entity in each audience (memory.entities).
        indexes = [
            GinIndex(fields=["name"], opclasses=["gin_trgm_ops"], name="entity_name_trgm"),
            models.Index(fields=["org", "type"], name="entity_org_type"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def public_id(self) -> str:
        return format_id("ent", self.pk)


class Fact(models.Model):
    """A self-contained statement with two timelines.

    valid_from / valid_to: when it was true in the world. recorded_at / superseded_at: when Brain
    believed it. "As of day D" means recorded by the end of D and not superseded by then.
    Supersession never deletes: the old fact keeps its row, with superseded_at and superseded_by.
    """

    class Kind(models.TextChoices):
        FACT = "fact"
        DECISION = "decision"
        PREFERENCE = "preference"
        EVENT = "event"
        PROCEDURE = "procedure"

    class Source(models.TextChoices):
        EXTRACTED = "extracted"  # from an ingested document
        REMEMBERED = "remembered"  # stated through remember

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="facts")
    statement = models.TextField()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FACT)
    subject = models.ForeignKey(
        Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="facts_as_subject"
    )
    object = models.ForeignKey(Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="facts_as_object")
    relation = models.CharField(max_length=80, blank=True)
    value_key = models.CharField(max_length=80, blank=True, help_text="The value this fact states, if any.")
    single_valued = models.BooleanField(default=False, help_text="Its relation or value holds one value at a time.")
    topic = models.CharField(
        max_length=200, blank=True, db_default="", help_text="What it states one value of, in words: 'plan|price'."
    )
    valid_from = models.DateField(null=True, blank=True)
    valid_to = models.DateField(null=True, blank=True)
    recorded_at = models.DateTimeField(default=timezone.now)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.EXTRACTED)
    document = models.ForeignKey(Document, null=True, blank=True, on_delete=models.CASCADE, related_name="facts")
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    title = models.CharField(max_length=240, blank=True)
    description = models.TextField(blank=True)
    category = models.ForeignKey(Category, on_delete=models.RESTRICT, related_name="+")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.SHARED)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    embedding_model = models.CharField(max_length=200, blank=True, help_text="The model that computed the vector.")
    # During a switch of models, the upcoming model's vector (memory.index.serving); empty otherwise.
    next_embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    next_embedding_model = models.CharField(max_length=200, blank=True, db_default="")
    search = models.GeneratedField(
        expression=SearchVector("statement", config="english"), output_field=SearchVectorField(), db_persist=True
    )
    # Flagged as broken by an admin: shown to nobody until reviewed (memory.access, memory.graph.fixes).
    flagged_at = models.DateTimeField(null=True, blank=True)
    flag_reason = models.CharField(max_length=500, blank=True, db_default="")
    flagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A relative date in it ("by Friday") was read against the day the document was saved, as the
    # document says nowhere when it was written: shown beside the fact so a person can correct it.
    dated_from_upload = models.BooleanField(default=False, db_default=False)
    # The earlier fact of another document saying the same thing, shown in its place
    # (``memory.graph.twins``); empty for a fact shown on its own.
    same_as = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="twins")
    trashed_at = models.DateTimeField(null=True, blank=True, help_text="Its document's, while in the trash.")

    class Meta:
        # As for chunks, HNSW and GIN indexes are per organisation (memory.index.org_indexes).
        indexes = [
            models.Index(fields=["org", "subject", "relation"], name="fact_subject_relation"),
            models.Index(fields=["org", "topic"], name="fact_topic", condition=~models.Q(topic="")),
            models.Index(fields=["org", "recorded_at"], name="fact_org_recorded"),
            # An entity's newest facts, as subject and as object (memory.search.evidence._entity_facts):
            # read in order and stopped early, however many facts the entity has.
            models.Index(fields=["subject", "-recorded_at", "-id"], name="fact_subject_newest"),
            models.Index(
                fields=["object", "-recorded_at", "-id"],
                name="fact_object_newest",
                condition=models.Q(object__isnull=False),
            ),
            models.Index(
                fields=["org", "flagged_at"], name="fact_flagged", condition=models.Q(flagged_at__isnull=False)
            ),
            # The same words said again (memory.graph.twins): a hash, as a statement may be longer than a btree key.
            HashIndex(Upper("statement"), name="fact_statement_words"),
        ]

    def __str__(self) -> str:
        return self.statement[:80]

    @property
    def public_id(self) -> str:
        return format_id("mem", self.pk)


class Value(models.Model):
    """A recorded value of an entity, for comparing and totalling across entities."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="values")
    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="values")
    key = models.CharField(max_length=80)
    number = models.FloatField(null=True, blank=True)
    date = models.DateField(null=True, blank=True)
    text = models.CharField(max_length=500, blank=True)
    unit = models.CharField(max_length=20, blank=True)
    stated_on = models.DateField(null=True, blank=True, help_text="The date the source stated it.")

    class Meta:
        indexes = [models.Index(fields=["org", "key"], name="value_org_key")]

    def __str__(self) -> str:
        return f"{self.entity} {self.key}={self.number if self.number is not None else self.date or self.text}"


class Mention(models.Model):
    """Where an entity is named, and what that source says it is: provenance from the graph back to
    documents, and the only place a reader's view of an entity's names, type and summary comes from."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="mentions")
    surface = models.CharField(max_length=200)
    type = models.CharField(max_length=40, blank=True, help_text="What this source says the entity is.")
    summary = models.TextField(blank=True, help_text="What this source says about the entity, if anything.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entity", "document", "surface"], name="mention_unique"),
        ]
        indexes = [
            GinIndex(fields=["surface"], opclasses=["gin_trgm_ops"], name="mention_surface_trgm"),
            models.Index(Lower("surface"), name="mention_surface_lower"),
        ]

    def __str__(self) -> str:
        return f"{self.surface} in {self.document_id}"


class EntityMerge(models.Model):
    """One merge of two entities, with everything it moved, so that it can be undone exactly."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    kept = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    merged = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    # "app.model.field" of each reference to an entity -> the ids of the rows moved from merged to kept.
    moved = models.JSONField(default=dict)
    added_aliases = models.JSONField(default=list, help_text="Names the kept entity took from the merged one.")
    merged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    merged_at = models.DateTimeField(default=timezone.now)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-merged_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.merged} into {self.kept}"

    @property
    def moved_count(self) -> int:
        return sum(len(ids) for ids in self.moved.values())


class SearchEpoch(models.Model):
    """Counters that move when what search may have cached about an audience goes stale.

    Search keeps an audience's keyword statistics and its list of speakers for some minutes
    (``memory.index.candidates``, ``memory.search.speakers``) and names these counters in
    the cache keys. Triggers in the database move them (migration 0012), so every way rows change
    counts, the admin and raw SQL included: ``withdrawn`` when a passage or fact is deleted or
    changes category, scope or owner (a cached figure may then count a row its audience may no
    longer read), ``speakers`` when a passage brings a speaker its audience did not have, or one
    with a speaker is withdrawn. Shared rows count under ``owner_id`` 0, personal ones under their
    owner, so one member's notes never clear what is cached for the others. No foreign keys: the
    triggers also fire while an organisation or a user is being deleted, and a row left behind
    is harmless."""

    org_id = models.BigIntegerField()
    owner_id = models.BigIntegerField(help_text="0 for shared rows, else the owner of personal ones.")
    speakers = models.BigIntegerField(default=0)
    withdrawn = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org_id", "owner_id"], name="searchepoch_audience")]

    def __str__(self) -> str:
        return f"org {self.org_id}, owner {self.owner_id}: speakers {self.speakers}, withdrawn {self.withdrawn}"
