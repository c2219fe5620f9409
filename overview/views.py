"""The admins' overview page: one organisation's documents, month, waiting work and last 30 days,
with a retry for each failed document. Who may open it is ``overview.selectors``'s rule."""

from __future__ import annotations

from typing import cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from brain.core.errors import DomainError
from brain.core.needs import list_waiting_work
from brain.core.selectors import features_on
from brain.faces.admin_base import admin_actor
from brain.faces.web import SwitchedOff, chosen_organisation, switched_off
from brain.models import Organisation
from memory.documents.ingestion import retry_document
from memory.documents.stewardship import review_by_category, stale_shared
from memory.models import Document, Scope
from overview import charts
from overview.selectors import Day, get_overview, list_overview_organisations
from skills.selectors import skill_review_counts

STALE_SHOWN = 20


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


@login_required
def overview_page(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    orgs = list_overview_organisations(user=user)
    if not orgs.exists():
        if not user.is_superuser:
            raise PermissionDenied("The overview is for the admins of an organisation.")
        return render(request, "overview/overview.html", {"orgs": [], "org": None, "overview": None})
    org = chosen_organisation(request, among=orgs)
    overview = get_overview(org=org)
    return render(
        request,
        "overview/overview.html",
        {
            "orgs": list(orgs),
            "org": org,
            "overview": overview,
            "charts": usage_charts(overview.days),
            "documents": [(s.value, s.label, overview.documents[s.value]) for s in Document.Status],
            "memory_empty": not any(overview.documents.values()),
            "waiting": list_waiting_work(user=user, org=org),
            "reviews": review_by_category(org=org),
            "stale": stale_shared(org=org, limit=STALE_SHOWN),
            "skill_reviews": dict(zip(("total", "unowned", "stale"), skill_review_counts(org=org), strict=True)),
            "registers_off": _off(user, org, ("commitments", "contradictions", "glossary")),
            "jobs_off": _off(user, org, ("jobs",)),
        },
    )


def _off(user: User, org: Organisation, features: tuple[str, ...]) -> list[SwitchedOff]:
    """``org`` as a next step when every one of ``features`` is off there."""
    on = features_on(org)
    return [] if any(name in on for name in features) else switched_off(user, [org])


@login_required
@require_POST
def retry(request: HttpRequest, document_id: int) -> HttpResponseRedirect:
    user = _user(request)
    orgs = list_overview_organisations(user=user)
    document = Document.objects.filter(pk=document_id, org__in=orgs, scope=Scope.SHARED).select_related("org").first()
    if document is None:
        raise Http404("No such document.")
    try:
        retry_document(actor=admin_actor(request, document.org), document_id=document.pk)
        messages.success(request, f"{document.title}: queued to be read again.")
    except DomainError as exc:
        messages.error(request, f"{document.title}: {exc.message}")
    return HttpResponseRedirect(f"{reverse('overview')}?{urlencode({'org': document.org.slug})}")


def usage_charts(days: list[Day]) -> dict[str, SafeString]:
    labels = [f"{d.day.day} {d.day:%b}" for d in days]
    drawn = {
        "calls": charts.stacked_bar_chart(
            chart_id="chart-calls",
            title="Calls per day by tool",
            labels=labels,
            series=charts.top_and_other([d.calls for d in days]),
            unit="calls",
        ),
        "credits": charts.bar_chart(
            chart_id="chart-credits",
            title="Credits spent per day",
            labels=labels,
            values=[d.credits for d in days],
            unit="credits",
            colour="#0b5cad",
        ),
        "errors": charts.bar_chart(
            chart_id="chart-errors",
            title="Errors per day",
            labels=labels,
            values=[d.errors for d in days],
            unit="errors",
            colour="#a40e26",
        ),
        "latency": charts.line_chart(
            chart_id="chart-latency",
            title="Latency per day, median and 95th percentile",
            labels=labels,
            series=[
                charts.Series("p50", [d.p50_ms for d in days], "#0072b2"),
                charts.Series("p95", [d.p95_ms for d in days], "#d55e00", dashed=True),
            ],
            unit="ms",
        ),
    }
    return {name: mark_safe(svg) for name, svg in drawn.items()}  # noqa: S308 (every text in it is escaped)
