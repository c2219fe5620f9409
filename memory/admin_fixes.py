"""The graph's fixes in the admin: merging entities and undoing a merge, an entity's type, flagging
a broken fact and reviewing it. Each page or action asks, calls one service of
``memory.graph.fixes`` per row, and reports; the services check, write and audit."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from brain.admin import OrgScopedAdmin, admin_actor
from brain.core.errors import DomainError
from brain.faces.admin_base import SameOrganisationForm
from memory.extraction.vocabulary import ENTITY_TYPES
from memory.graph import fixes
from memory.models import Entity, EntityMerge, Fact

MERGE_FIELDS = ("merged", "kept", "what_moved", "added_aliases", "merged_by", "merged_at", "undone_by", "undone_at")


class EntityTypeForm(SameOrganisationForm):
    type = forms.ChoiceField(
        choices=[(t, t) for t in ENTITY_TYPES],
        help_text="Shown to every reader instead of the type the sources give; extraction no longer changes it.",
    )


class MergeForm(forms.Form):
    kept = forms.ModelChoiceField(
        queryset=Entity.objects.none(),
        widget=forms.RadioSelect,
        empty_label=None,
        label="Keep",
        help_text="The others are merged into it: it takes their names, facts and mentions, and they are retired.",
    )

    def __init__(self, *args: Any, entities: QuerySet[Entity], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["kept"]).queryset = entities


class EntityFixesAdmin(OrgScopedAdmin):
    """The entity list: merging selected entities into one of them, and the type on the form."""

    form = EntityTypeForm
    actions = ["merge_selected"]
    audit_form_writes = False  # change_entity_type records the change

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        return super().get_queryset(request).filter(pk__in=fixes.admin_entities().values("pk"))

    def save_model(self, request: HttpRequest, obj: Entity, form: Any, change: bool) -> None:
        if "type" not in form.changed_data:
            return
        try:
            fixes.change_entity_type(actor=admin_actor(request, obj.org), entity_id=obj.pk, type=obj.type)
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description="Merge selected entities into…")
    def merge_selected(self, request: HttpRequest, queryset: QuerySet[Entity]) -> HttpResponse | None:
        entities = queryset.select_related("org").order_by("name", "pk")
        orgs = {entity.org_id for entity in entities}
        if len(entities) < 2 or len(orgs) != 1:
            self.message_user(request, "Select two or more entities of one organisation to merge.", messages.WARNING)
            return None
        form = MergeForm(request.POST if request.POST.get("post") == "yes" else None, entities=entities)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "title": "Merge entities",
                "opts": self.opts,
                "entities": entities,
                "form": form,
            }
            return TemplateResponse(request, "admin/memory/entity/merge.html", context)
        kept = form.cleaned_data["kept"]
        actor = admin_actor(request, kept.org)
        done = 0
        for entity in entities:
            if entity.pk == kept.pk:
                continue
            try:
                fixes.merge_entities(actor=actor, kept_id=kept.pk, merged_id=entity.pk)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{entity}: {exc.message}", messages.ERROR)
        if done:
            self.message_user(
                request, f"{done} entit{'y' if done == 1 else 'ies'} merged into {kept}.", messages.SUCCESS
            )
        return None


class FlaggedFilter(admin.SimpleListFilter):
    title = "flagged as broken"
    parameter_name = "flagged"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Flagged, to review"), ("no", "Not flagged")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Fact]) -> QuerySet[Fact]:
        if self.value() == "yes":
            return queryset.filter(flagged_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(flagged_at__isnull=True)
        return queryset


class FlagForm(forms.Form):
    reason = forms.CharField(
        max_length=fixes.FLAG_REASON_LIMIT,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="What is wrong with it. Until it is reviewed, nobody is shown the fact.",
    )


class FactFixesAdmin(OrgScopedAdmin):
    """The fact list: flagging broken facts with a reason, and reviewing the flagged ones."""

    actions = ["flag_selected", "restore_selected", "retire_selected"]

    @admin.display(description="flagged for")
    def flag(self, fact: Fact) -> str:
        return fact.flag_reason if fact.flagged_at else ""

    @admin.action(description="Flag as broken…")
    def flag_selected(self, request: HttpRequest, queryset: QuerySet[Fact]) -> HttpResponse | None:
        facts = list(queryset.select_related("org"))
        form = FlagForm(request.POST if request.POST.get("post") == "yes" else None)
        if not form.is_valid():
            context = {
                **self.admin_site.each_context(request),
                "title": "Flag facts as broken",
                "opts": self.opts,
                "facts": facts,
                "form": form,
            }
            return TemplateResponse(request, "admin/memory/fact/flag.html", context)
        reason = form.cleaned_data["reason"]
        done = self._each(
            request, facts, lambda actor, fact: fixes.flag_fact(actor=actor, fact_id=fact.pk, reason=reason)
        )
        if done:
            self.message_user(
                request, f"{done} fact(s) flagged: nobody is shown them until reviewed.", messages.SUCCESS
            )
        return None

    @admin.action(description="Review: restore the flagged facts (they are right)")
    def restore_selected(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        done = self._each(
            request,
            list(queryset.select_related("org")),
            lambda actor, fact: fixes.restore_fact(actor=actor, fact_id=fact.pk),
        )
        if done:
            self.message_user(request, f"{done} fact(s) restored.", messages.SUCCESS)

    @admin.action(description="Review: retire the flagged facts (they are wrong)")
    def retire_selected(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        done = self._each(
            request,
            list(queryset.select_related("org")),
            lambda actor, fact: fixes.retire_fact(actor=actor, fact_id=fact.pk),
        )
        if done:
            self.message_user(request, f"{done} fact(s) retired as wrong.", messages.SUCCESS)

    def _each(self, request: HttpRequest, facts: list[Fact], fix: Any) -> int:
        done = 0
        for fact in facts:
            try:
                fix(admin_actor(request, fact.org), fact)
                done += 1
            except DomainError as exc:
                self.message_user(request, f"{fact.public_id}: {exc.message}", messages.WARNING)
        return done


@admin.register(EntityMerge)
class EntityMergeAdmin(OrgScopedAdmin):
    """The history of merges, each with what it moved and a button to undo it."""

    list_display = ["merged", "kept", "merged_by", "merged_at", "undone_at"]
    list_select_related = ["merged", "kept", "merged_by"]
    fields = MERGE_FIELDS
    readonly_fields = MERGE_FIELDS
    actions = ["undo_selected"]
    change_form_template = "admin/memory/entitymerge/change_form.html"

    @admin.display(description="what moved")
    def what_moved(self, merge: EntityMerge) -> str:
        counts = fixes.shared_counts(merge.moved)
        return ", ".join(f"{key.split('.', 1)[1]}: {n}" for key, n in counts.items()) or "nothing"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # merges are made from the entity list

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the record is what an undo needs

    def get_urls(self) -> list[URLPattern]:
        undo = path(
            "<path:object_id>/undo/", self.admin_site.admin_view(self.undo_view), name="memory_entitymerge_undo"
        )
        return [undo, *super().get_urls()]

    def undo_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        merge = self.get_object(request, unquote(object_id))
        if merge is None:
            self.message_user(request, "That merge does not exist.", messages.WARNING)
            return HttpResponseRedirect(reverse("admin:memory_entitymerge_changelist"))
        self._undo(request, merge)
        return HttpResponseRedirect(reverse("admin:memory_entitymerge_change", args=[merge.pk]))

    @admin.action(description="Undo the selected merges")
    def undo_selected(self, request: HttpRequest, queryset: QuerySet[EntityMerge]) -> None:
        # Newest first: a merge into an entity merged again later can only be undone after that one.
        for merge in queryset.select_related("org", "merged", "kept").order_by("-merged_at", "-pk"):
            self._undo(request, merge)

    def _undo(self, request: HttpRequest, merge: EntityMerge) -> None:
        try:
            fixes.undo_merge(actor=admin_actor(request, merge.org), merge_id=merge.pk)
        except DomainError as exc:
            self.message_user(request, f"{merge}: {exc.message}", messages.ERROR)
        else:
            self.message_user(request, f"Undone: {merge.merged} is back in use.", messages.SUCCESS)
