"""My memories: what the viewer stated through remember (with forget, through the ``forget``
tool, for what it allows) and the documents they saved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.faces.web import notice_with_undo, web_actor
from brain.infra.ids import parse_numeric_id
from memory.access import audience_key
from memory.documents.placement import readers_of
from memory.documents.selectors import list_saved_documents
from memory.graph.provenance import remembered_by
from memory.mcp_tools.memories import ForgottenOut
from memory.mcp_tools.shapes import fact_outs
from memory.models import Fact
from memory.web.common import run_tool
from memory.web.facts import FactRow, fact_rows


@dataclass(frozen=True)
class Memory:
    """One remember call: the statement, and the relations remembered with it (forgotten together)."""

    main: FactRow
    related: list[FactRow]
    scope: str
    document_url: str | None
    readers: str  # who reads it now, in words (``readers_of``), for the confirmation before Forget


def _memories(facts: list[Fact], rows: list[FactRow], viewer: User) -> list[Memory]:
    by_document: dict[int | str, list[tuple[Fact, FactRow]]] = {}
    for fact, row in zip(facts, rows, strict=True):
        by_document.setdefault(fact.document_id or row.memory_id, []).append((fact, row))
    memories = []
    readers: dict[tuple[object, ...], str] = {}
    for members in by_document.values():
        members.sort(key=lambda pair: pair[0].pk)  # the statement is recorded before its relations
        (fact, main), related = members[0], [row for _, row in members[1:]]
        url = reverse("memory-document", args=[fact.document_id]) if fact.document_id else None
        audience = audience_key(fact.scope, fact.owner_id, fact.category_id)
        if audience not in readers:
            readers[audience] = readers_of(fact, viewer=viewer)
        memories.append(Memory(main, related, fact.scope, url, readers[audience]))
    return sorted(memories, key=lambda m: m.main.recorded_at, reverse=True)


@login_required
def my_memories(request: HttpRequest) -> HttpResponse:
    actor = web_actor(request)
    facts = remembered_by(actor=actor)
    memories = _memories(facts, fact_rows(fact_outs(actor, facts)), actor.user)
    saved = list_saved_documents(actor=actor)
    return render(request, "memory/mine.html", {"org": actor.org, "memories": memories, "saved": saved})


@login_required
@require_POST
def forget_memory(request: HttpRequest) -> HttpResponseRedirect:
    actor = web_actor(request)
    outcome = run_tool(actor, "forget", {"memory_id": request.POST.get("memory_id", "")})
    if outcome.output is None:
        messages.error(request, outcome.message)
        return HttpResponseRedirect(reverse("memory-mine"))
    forgotten = cast(ForgottenOut, outcome.output)
    memory_id = parse_numeric_id(forgotten.memory_id, "mem") or 0
    document_id = Fact.objects.filter(pk=memory_id, org=actor.org).values_list("document_id", flat=True).first()
    if forgotten.in_trash_until is None or document_id is None:
        messages.success(request, f"Forgotten: {forgotten.forgotten}")
    else:
        notice_with_undo(
            request,
            f"Forgotten: {forgotten.forgotten}. It is in the trash until {forgotten.in_trash_until}.",
            undo_url=f"{reverse('memory-trash-restore', args=[document_id])}?org={actor.org.slug}",
        )
    return HttpResponseRedirect(reverse("memory-mine"))
