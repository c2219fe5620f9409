"""The Connectors page: an organisation admin chooses a kind of connection and fills in that kind's
fields alone (each with its own control: a secret a password input, a list one per line, a choice a
select, a yes or no a checkbox), sees each connection's state and last error in words,
syncs it now, pauses it, replaces its credentials, sees the tools it gives assistants and grants
or withdraws its ACTION tools, and removes it, with or without what it brought in. Every change
goes through connectors.sync or connectors.grants, with their checks and audit records."""

from __future__ import annotations

from typing import cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.errors import DomainError
from brain.core.services import actor_for_user
from brain.models import Category, Membership, Organisation
from connectors import sync
from connectors.grants import grant_tool
from connectors.kinds import KINDS, error_in_words
from connectors.models import Connection


def _administered(user: User) -> list[Organisation]:
    return list(
        Organisation.objects.filter(memberships__user=user, memberships__role=Membership.ADMIN).order_by("name")
    )


@login_required
def connectors_page(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)
    orgs = _administered(user)
    if not orgs:
        return render(request, "connectors/connectors.html", {"sections": []}, status=403)
    status = 200
    if request.method == "POST":
        status = _add(request, user, orgs)
        if status == 302:
            return HttpResponseRedirect(reverse("connectors"))
    sections = []
    for org in orgs:
        actor = actor_for_user(org=org, user=user, via="web")
        connections = sync.connections_of(actor=actor)
        for connection in connections:  # read by the template, in words
            connection.error_in_words = error_in_words(connection.last_error)  # type: ignore[attr-defined]
        sections.append(
            {
                "org": org,
                "connections": connections,
                "categories": list(Category.objects.filter(org=org).order_by("name")),
            }
        )
    kinds = [(k.slug, k.label, k.form_fields()) for k in KINDS.values()]
    wanted = request.POST.get("kind") if request.method == "POST" else request.GET.get("kind")
    chosen = wanted if wanted in KINDS else ""
    context = {"sections": sections, "kinds": kinds, "chosen": chosen, "base_url": settings.BRAIN_BASE_URL}
    return render(request, "connectors/connectors.html", context, status=status)


def _add(request: HttpRequest, user: User, orgs: list[Organisation]) -> int:
    org = next((o for o in orgs if str(o.pk) == request.POST.get("org")), None)
    kind = KINDS.get(request.POST.get("kind", ""))
    category = Category.objects.filter(org=org, pk=request.POST.get("category") or 0).first() if org else None
    if org is None or kind is None or category is None:
        messages.error(request, "Choose an organisation, a kind of connection and a category.")
        return 400
    try:
        connection = sync.add_connection(
            actor=actor_for_user(org=org, user=user, via="web"),
            kind=kind.slug,
            name=request.POST.get("name", ""),
            category=category,
            credentials={field: _field(request, kind.slug, f"credential_{field}") for field in kind.credential_fields},
            options={  # an unticked checkbox is not sent at all: it says no
                field: _field(request, kind.slug, f"option_{field}") or ("no" if field in kind.flag_fields else "")
                for field in kind.option_fields
            },
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return 400
    messages.success(request, f"{connection.name} is added; its first sync starts within a minute.")
    return 302


def _field(request: HttpRequest, kind: str, name: str) -> str:
    """A field of the add form: each kind's fields are named after it ("slack-credential_token"), so
    two kinds asking for a field of the same name never mix; the bare name is read as well."""
    return str(request.POST.get(f"{kind}-{name}") or request.POST.get(name, ""))


@login_required
@require_POST
def connection_action(request: HttpRequest, connection_id: int, action: str) -> HttpResponse:
    user = cast(User, request.user)
    org = Connection.objects.filter(pk=connection_id).values_list("org", flat=True).first()
    try:
        member = Organisation.objects.filter(pk=org or 0, memberships__user=user).first()
        if member is None:
            raise DomainError("No such connection.")
        actor = actor_for_user(org=member, user=user, via="web")
        if action == "sync":
            done = sync.sync_soon(actor=actor, connection_id=connection_id)
            messages.success(request, f"{done.name} syncs within a minute.")
        elif action in ("pause", "resume"):
            done = sync.pause_connection(actor=actor, connection_id=connection_id, paused=action == "pause")
            messages.success(request, f"{done.name} is {'paused' if action == 'pause' else 'running again'}.")
        elif action == "credentials":
            fields = {key.removeprefix("credential_"): str(request.POST.get(key, "")) for key in request.POST}
            done = sync.replace_credentials(actor=actor, connection_id=connection_id, credentials=fields)
            messages.success(request, f"{done.name} has new credentials; it syncs within a minute.")
        elif action in ("grant", "withdraw"):
            tool = str(request.POST.get("tool", ""))
            done = grant_tool(actor=actor, connection_id=connection_id, tool=tool, granted=action == "grant")
            said = "may now use" if action == "grant" else "may no longer use"
            messages.success(request, f"Assistants {said} {tool} through {done.name}.")
        elif action == "remove":
            keep = request.POST.get("documents") != "delete"
            deleted = sync.remove_connection(actor=actor, connection_id=connection_id, keep_documents=keep)
            messages.success(
                request, "The connection is removed" + (f", with {deleted} documents." if not keep else ".")
            )
        else:
            raise DomainError("No such action.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return HttpResponseRedirect(reverse("connectors"))
