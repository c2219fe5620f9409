"""Documents (episodes) and their searchable chunks."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from brain.models import Category, Organisation

EMBEDDING_DIMENSIONS = 384


class Scope(models.TextChoices):
    SHARED = "shared", "Shared with the organisation"
    PERSONAL = "personal", "Personal to its owner"


class Document(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        WAITING = "waiting"  # ingestion paused for the organisation; resumes by itself
        PROCESSING = "processing"
        READY = "ready"
        FAILED = "failed"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=240)
    content = models.TextField()
    content_type = models.CharField(max_length=40, default="text/plain")
    source_kind = models.CharField(max_length=40, default="api")
    source_url = models.CharField(max_length=1000, blank=True)
    external_id = models.CharField(max_length=240, blank=True)
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
    processed_at = models.DateTimeField(null=True, blank=True)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    chunk_count = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            models.Index(fields=["org", "status"], name="document_org_status"),
            models.Index(fields=["org", "-recorded_at"], name="document_org_recorded"),
            models.Index(fields=["org", "source_kind", "external_id"], name="document_external_id"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def public_id(self) -> str:
        return f"doc_{self.pk}"


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
    search = models.GeneratedField(
        expression=SearchVector("title", weight="A", config="english")
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

    class Meta:
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search"], name="chunk_search_gin"),
            models.Index(fields=["org", "document", "ordinal"], name="chunk_org_document"),
        ]

    def __str__(self) -> str:
        return f"{self.title} #{self.ordinal}"

    @property
    def public_id(self) -> str:
        return f"chunk_{self.pk}"
