"""Admin of the memory. Knowledge is read here, not edited: content changes only by saving a new
version through the tools, the API or manage.py ingest. Who may read a document changes through
``memory.documents.placement``, which moves its chunks and facts with it. The graph's fixes (merging
entities, their type, flagging broken facts) are in ``memory.admin_fixes``. Personal rows are
hidden."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from brain.admin import OrganisationAdmin, OrgScopedAdmin, admin_actor
from brain.core.errors import DomainError
from brain.core.reviews import checked_interval
from brain.faces.admin_base import SameOrganisationForm, staff_user
from brain.models import Organisation
from memory.admin_fixes import EntityFixesAdmin, FactFixesAdmin, FlaggedFilter
from memory.documents.ingestion import pause_ingestion, resume_ingestion, retry_document
from memory.documents.placement import change_document_access, check_access
from memory.documents.stewardship import set_document_review, steward_may_read
from memory.documents.trash import delete_documents, move_to_trash
from memory.graph.learning import retry_extraction
from memory.models import Chunk, Document, Entity, Fact, Value

ACCESS_FIELDS = ("category", "scope", "owner")
REVIEW_FIELDS = ("steward", "review_every_days")  # set through memory.documents.stewardship


class DocumentAccessForm(SameOrganisationForm):
    """Category, scope and owner, checked by the same rule the placement service applies; the steward
    must be able to read the document where it is placed."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if not self.errors and all(name in cleaned for name in ("category", "scope")):
            try:
                check_access(
                    org=self.instance.org,
                    category=cleaned["category"],
                    scope=cleaned["scope"],
                    owner=cleaned.get("owner"),
                )
                checked_interval(cleaned.get("review_every_days"))
            except DomainError as exc:
                self.add_error(None, exc.message)
            steward, owner = cleaned.get("steward"), cleaned.get("owner")
            if steward is not None and not steward_may_read(
                steward,
                org=self.instance.org,
                category_id=cleaned["category"].pk,
                scope=cleaned["scope"],
                owner_id=owner.pk if owner is not None else None,
            ):
                self.add_error("steward", "Choose a steward who can read this document.")
        return cleaned


@admin.register(Document)
class DocumentAdmin(OrgScopedAdmin):
    list_display = ["title", "org", "status", "extraction", "source_kind", "category", "scope", "chunk_count",
                    "version", "attempts", "recorded_at", "superseded_at", "trashed_at"]  # fmt: skip
    list_filter = ["status", "extraction", "source_kind", ("trashed_at", admin.EmptyFieldListFilter)]
    search_fields = ["title", "external_id"]
    date_hierarchy = "recorded_at"
    shared_only = "scope"
    form = DocumentAccessForm
    readonly_fields = [f.name for f in Document._meta.fields if f.name not in ("id", *ACCESS_FIELDS, *REVIEW_FIELDS)]
    actions = ["retry", "retry_extraction"]
    audit_form_writes = False  # change_document_access records the change

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # documents come in through the tools, the API and manage.py ingest, which queue ingestion

    def save_model(self, request: HttpRequest, obj: Document, form: Any, change: bool) -> None:
        data = form.cleaned_data
        change_document_access(
            actor=admin_actor(request, obj.org),
            document_id=obj.pk,
            category=data["category"],
            scope=data["scope"],
            owner=data.get("owner"),
        )
        if any(name in form.changed_data for name in REVIEW_FIELDS) and obj.superseded_at is None:
            steward = data.get("steward")
            set_document_review(
                actor=admin_actor(request, obj.org),
                document_id=obj.pk,
                steward_id=steward.pk if steward is not None else None,
                review_every_days=data.get("review_every_days"),
            )

    # Deleting here moves a document to the trash, restorable for the organisation's period
    # (memory.documents.trash); deleting one already in the trash deletes it for good.
    def delete_model(self, request: HttpRequest, obj: Document) -> None:
        self.delete_queryset(request, Document.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        with transaction.atomic():
            documents = list(queryset.select_for_update(of=("self",)).select_related("org").order_by("pk"))
            for document in documents:
                self.audit_deletion(request, document)
            delete_documents([d for d in documents if d.trashed_at is not None])
            live = [d for d in documents if d.trashed_at is None]
            for org_id in sorted({d.org_id for d in live}):
                mine = [d for d in live if d.org_id == org_id]
                move_to_trash(actor=admin_actor(request, mine[0].org), documents=mine)

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

    @admin.action(description="Retry the selected failed extractions")
    def retry_extraction(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        done = sum(retry_extraction(document_id=pk) for pk in queryset.values_list("pk", flat=True))
        self.message_user(request, f"{done} extraction(s) queued again.", messages.SUCCESS)


@admin.register(Chunk)
class ChunkAdmin(OrgScopedAdmin):
    shared_only = "scope"
    list_display = ["document", "ordinal", "heading", "org", "recorded_at", "superseded_at"]
    search_fields = ["text", "title"]
    readonly_fields = ["document", "ordinal", "title", "heading", "text", "char_start", "char_end", "category",
                       "scope", "owner", "recorded_at", "superseded_at"]  # fmt: skip
    exclude = ["embedding", "next_embedding"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.action(description="Pause ingestion (new documents wait)")
def pause(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
    for org in queryset:
        pause_ingestion(actor=staff_user(request), org=org)
    modeladmin.message_user(request, f"Ingestion paused for {queryset.count()} organisation(s).", messages.SUCCESS)


@admin.action(description="Resume ingestion (queue waiting documents)")
def resume(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Organisation]) -> None:
    queued = sum(resume_ingestion(actor=staff_user(request), org=org) for org in queryset)
    modeladmin.message_user(request, f"Ingestion resumed; {queued} waiting document(s) queued.", messages.SUCCESS)


OrganisationAdmin.actions = [*OrganisationAdmin.actions, pause, resume]
OrganisationAdmin.list_display = [*OrganisationAdmin.list_display, "ingestion_paused_at"]


@admin.register(Entity)
class EntityAdmin(EntityFixesAdmin):
    """Entities named in shared sources. What members are shown of one (names, summary, and type
    unless an admin chose it) comes from the mentions they may read, so these fields are the
    first-seen record, read-only but for the type; an entity only personal memories name belongs
    to their owner and is hidden here, and so is an entity merged into another (see its merge)."""

    list_display = ["name", "type", "type_fixed", "org", "created_at"]
    list_filter = ["type", "type_fixed"]
    search_fields = ["name", "aliases"]
    fields = ["name", "type", "type_fixed", "aliases", "summary", "created_at"]
    readonly_fields = ["name", "type_fixed", "aliases", "summary", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # entities come from the sources that name them


@admin.register(Fact)
class FactAdmin(FactFixesAdmin):
    """Links and validity can be corrected; the statement, its access and its history cannot. A
    broken fact is flagged with an action (nobody is shown it) and reviewed with another."""

    list_display = [
        "statement",
        "kind",
        "subject",
        "relation",
        "valid_from",
        "valid_to",
        "recorded_at",
        "superseded_at",
        "source",
        "flag",
    ]
    list_filter = [FlaggedFilter, "kind", "source"]
    search_fields = ["statement"]
    exclude = ["embedding", "next_embedding"]
    shared_only = "scope"  # personal memories belong to their owners, even in the admin
    readonly_fields = ["statement", "source", "document", "chunk", "category", "scope", "owner", "created_by",
                       "recorded_at", "superseded_at", "superseded_by", "flagged_at", "flag_reason",
                       "flagged_by"]  # fmt: skip
    raw_id_fields = ["subject", "object"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # facts come from documents and remember, which embed and supersede them


@admin.register(Value)
class ValueAdmin(OrgScopedAdmin):
    list_display = ["entity", "key", "number", "date", "text", "unit", "stated_on"]
    list_filter = ["key"]
    shared_only = "fact__scope"
    raw_id_fields = ["entity", "fact"]
