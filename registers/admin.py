"""Admin of the registers: commitments and glossary to browse and filter, contradictions to
answer side by side. Answers and settlements go through the same services as the tools."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from brain.admin import OrgScopedAdmin, ReadOnlyInline, admin_actor
from brain.core.errors import DomainError
from registers.citations import contradiction_sides, plain
from registers.contradictions.services import answer_contradiction, without_personal
from registers.forms import AnswerForm
from registers.glossary.services import update_term
from registers.models import Commitment, CommitmentSource, Contradiction, Term, Verdict


class VerdictInline(admin.TabularInline):
    model = Verdict
    extra = 0
    can_delete = False
    fields = ("checked_at", "evidence", "looked_for")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="what it found")
    def evidence(self, verdict: Verdict) -> str:
        """Each sentence the verdict rests on, with its source linked to the passage (never an id)."""
        if not verdict.found:
            return verdict.summary
        rows = []
        for item in verdict.found:
            document, passage = item.get("document_pk"), item.get("passage_pk")
            url = ""
            if document:
                url = reverse("memory-document", args=[document]) + (f"#passage-{passage}" if passage else "")
            rows.append((item.get("line", ""), url, plain(str(item.get("title", ""))), item.get("day", "")))
        return format_html(
            "Said after the promise:<ul>{}</ul>",
            format_html_join("", '<li>“{}” <a href="{}">{}</a>, {}</li>', rows),
        )


class SourceInline(ReadOnlyInline):
    """The further places the promise was said (they have the commitment's audience)."""

    model = CommitmentSource
    fk_name = "commitment"
    can_delete = False
    verbose_name_plural = "also said in"
    fields = ("document", "promised_on", "due_on", "what", "quote")
    readonly_fields = fields


@admin.register(Commitment)
class CommitmentAdmin(OrgScopedAdmin):
    list_display = ["what", "owner_name", "state", "due_on", "promised_on", "origin", "org"]
    list_filter = ["state", "origin", "due_on"]
    search_fields = ["what", "owner_name", "quote"]
    shared_only = "scope"
    readonly_fields = ["document", "chunk", "quote", "origin", "fingerprint", "settled_by", "settled_at",
                       "created_by", "category", "scope", "owner", "owner_entity"]  # fmt: skip
    inlines = [SourceInline, VerdictInline]


@admin.register(Contradiction)
class ContradictionAdmin(OrgScopedAdmin):
    list_display = ["about", "severity", "state", "claim_a", "claim_b", "created_at", "org"]
    list_filter = ["state", "severity"]
    search_fields = ["about", "subject", "claim_a", "claim_b"]
    ordering = ["state", "severity", "-pk"]
    readonly_fields = [f.name for f in Contradiction._meta.fields if f.name not in ("id", "severity")]

    def get_queryset(self, request: HttpRequest) -> Any:
        return without_personal(super().get_queryset(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # raised by the nightly scan and by raise_contradiction

    def get_urls(self) -> list[URLPattern]:
        answer = path("<int:pk>/answer/", self.admin_site.admin_view(self.answer_view), name="registers_answer")
        return [answer, *super().get_urls()]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None) -> Any:
        return HttpResponseRedirect(reverse("admin:registers_answer", args=[object_id]))

    def answer_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        entry = get_object_or_404(self.get_queryset(request), pk=pk)
        form = AnswerForm(request.POST or None, statements=2 + len(entry.more))
        if request.method == "POST" and form.is_valid():
            try:
                answer_contradiction(
                    actor=admin_actor(request, entry.org),
                    contradiction_id=entry.public_id,
                    answer=form.cleaned_data["answer"],
                    note=form.cleaned_data["note"],
                )
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(request, f"{entry.public_id} answered.", messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:registers_contradiction_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "entry": entry,
            "sides": contradiction_sides(admin_actor(request, entry.org), [entry])[entry.pk],
            "form": form,
            "opts": self.model._meta,
            "title": f"Contradiction: {entry.about}",
        }
        return TemplateResponse(request, "registers/answer_contradiction.html", context)


@admin.register(Term)
class TermAdmin(OrgScopedAdmin):
    list_display = ["term", "state", "kind", "senses", "uses", "definition", "org"]
    list_filter = ["state", "kind", "senses"]
    search_fields = ["term", "definition", "suggestion"]
    readonly_fields = ["key", "kind", "uses", "examples", "suggestion", "senses", "memory", "defined_by", "defined_at",
                       "proposal", "proposed_by", "proposed_at", "proposal_passage"]  # fmt: skip

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # found nightly, or defined with define_term (which makes its memory)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [*self.readonly_fields, "term", "created_at"]  # the word is the entry's key

    def save_model(self, request: HttpRequest, obj: Term, form: forms.ModelForm[Term], change: bool) -> None:
        """A definition or state changed here goes through the glossary's service, like
        update_term: the shared memory that search and ask serve follows what the admin wrote."""
        if not change or not {"definition", "state"} & set(form.changed_data):
            super().save_model(request, obj, form, change)
            return
        stored = Term.objects.get(pk=obj.pk)
        wants_text = obj.state == Term.State.DEFINED
        try:
            update_term(
                actor=admin_actor(request, obj.org),
                term_id=obj.public_id,
                definition=obj.definition if wants_text else None,
                state=None if wants_text else obj.state,
                note=obj.note or None,
            )
        except DomainError as exc:
            self.message_user(request, f"{obj.term} was not changed: {exc.message}", messages.ERROR)
            obj.definition, obj.state = stored.definition, stored.state
