from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from brain.admin import OrganisationAdmin, OrgScopedAdmin, admin_actor
from brain.errors import DomainError
from brain.models import Organisation
from memory.models import Chunk, Document, Entity, Fact, Value
from memory.services import pause_ingestion, resume_ingestion, retry_document


@admin.register(Document)
class DocumentAdmin(OrgScopedAdmin):
    list_display = ["title", "org", "status", "source_kind", "category", "scope", "chunk_count", "version",
                    "attempts", "recorded_at", "superseded_at"]  # fmt: skip
    list_filter = ["status", "source_kind", "scope"]
    search_fields = ["title", "external_id"]
    date_hierarchy = "recorded_at"
    readonly_fields = ["status", "error", "attempts", "claim", "claimed_at", "content_hash", "version", "previous",
                       "processed_at", "superseded_at", "superseded_by", "chunk_count", "recorded_at"]  # fmt: skip
    actions = ["retry"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents come in through the tools, the API and manage.py ingest, which queue ingestion

    @admin.action(description="Retry the selected failed documents")
    def retry(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        done = 0
        for document in queryset.select_related("org"):
            try:
                retry_document(actor=admin_actor(request, document.org), document_id=document.pk)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{document}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{done} document(s) queued again.", messages.SUCCESS)


@admin.register(Chunk)
class ChunkAdmin(OrgScopedAdmin):
    list_display = ["document", "ordinal", "heading", "org", "recorded_at", "superseded_at"]
    search_fields = ["text", "title"]
    readonly_fields = ["document", "ordinal", "title", "heading", "text", "char_start", "char_end", "category",
                       "scope", "owner", "recorded_at", "superseded_at"]  # fmt: skip
    exclude = ["embedding"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.action(description="Pause ingestion (new documents wait)")
def pause(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
    for org in queryset:
        pause_ingestion(org=org)
    modeladmin.message_user(request, f"Ingestion paused for {queryset.count()} organisation(s).", messages.SUCCESS)


@admin.action(description="Resume ingestion (queue waiting documents)")
def resume(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
    queued = sum(resume_ingestion(org=org) for org in queryset)
    modeladmin.message_user(request, f"Ingestion resumed; {queued} waiting document(s) queued.", messages.SUCCESS)


OrganisationAdmin.actions = [*OrganisationAdmin.actions, pause, resume]
OrganisationAdmin.list_display = [*OrganisationAdmin.list_display, "ingestion_paused_at"]


@admin.register(Entity)
class EntityAdmin(OrgScopedAdmin):
    list_display = ["name", "type", "org", "created_at"]
    list_filter = ["type"]
    search_fields = ["name", "aliases"]
    exclude = ["embedding"]


@admin.register(Fact)
class FactAdmin(OrgScopedAdmin):
    list_display = ["statement", "kind", "subject", "relation", "valid_from", "valid_to", "recorded_at",
                    "superseded_at", "source", "scope"]  # fmt: skip
    list_filter = ["kind", "source", "scope"]
    search_fields = ["statement"]
    exclude = ["embedding"]
    raw_id_fields = ["subject", "object", "document", "chunk", "superseded_by"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Personal memories belong to their owners, even in the admin.
        return super().get_queryset(request).filter(scope="shared")


@admin.register(Value)
class ValueAdmin(OrgScopedAdmin):
    list_display = ["entity", "key", "number", "date", "text", "unit", "stated_on"]
    list_filter = ["key"]
    raw_id_fields = ["entity", "fact"]
