"""The audit trail page for an organisation's admins: ``/audit/<slug>/``, filtered and paged,
newest first, times in the organisation's zone, with an export of what the filters show. The
rules (who may read which trail, what a filter means, what an export records) are
``brain.core.audit_trail``'s; this module parses the request and shows the answer."""

from __future__ import annotations

import json
from typing import cast
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from brain.core.audit_trail import (
    INTERFACES,
    AuditFilters,
    export_audit,
    get_audited_organisation,
    list_audit_records,
    parse_audit_filters,
)
from brain.core.errors import DomainError, NotFound
from brain.core.selectors import list_administered_organisations
from brain.faces.times import local_time
from brain.faces.web import chosen_organisation
from brain.models import AuditRecord, Organisation

PER_PAGE = 50
FILTER_KEYS = ("action", "person", "via", "since", "until", "target")
ACTIONS_OFFERED = 200  # distinct actions the action box suggests


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)


def _organisation(request: HttpRequest, slug: str) -> Organisation:
    user = _user(request)
    if not list_administered_organisations(user=user).exists():
        raise PermissionDenied("The audit trail is for the admins of an organisation.")
    try:
        return get_audited_organisation(user=user, slug=slug)
    except NotFound as error:
        raise Http404(error.message) from error


@login_required
def audit_home(request: HttpRequest) -> HttpResponseRedirect:
    """``/audit/``: the trail of the organisation chosen last (or the first one administered)."""
    orgs = list_administered_organisations(user=_user(request))
    if not orgs.exists():
        raise PermissionDenied("The audit trail is for the admins of an organisation.")
    return HttpResponseRedirect(reverse("audit-trail", args=[chosen_organisation(request, among=orgs).slug]))


@login_required
def audit_page(request: HttpRequest, slug: str) -> HttpResponse:
    org = _organisation(request, slug)
    filters, problem = AuditFilters(), ""
    try:
        filters = parse_audit_filters(request.GET)
    except DomainError as error:
        problem = error.message
    records = list_audit_records(org=org, filters=filters) if not problem else AuditRecord.objects.none()
    page = Paginator(records, PER_PAGE).get_page(request.GET.get("page"))
    query = filters.as_params()
    here = reverse("audit-trail", args=[org.slug])
    context = {
        "org": org,
        "orgs": list(list_administered_organisations(user=_user(request))),
        "filters": filters,
        "problem": problem,
        "page": page,
        "rows": [_row(record, org) for record in page.object_list],
        "interfaces": INTERFACES,
        "actions": _actions(org),
        "query": query,
        "previous_url": f"{here}?{urlencode({**query, 'page': page.previous_page_number()})}"
        if page.has_previous()
        else "",
        "next_url": f"{here}?{urlencode({**query, 'page': page.next_page_number()})}" if page.has_next() else "",
    }
    return render(request, "overview/audit.html", context, status=400 if problem else 200)


def _row(record: AuditRecord, org: Organisation) -> dict[str, str]:
    return {
        "time": local_time(record.created_at, org),
        "who": record.who,
        "via": record.via,
        "action": record.action,
        "target": record.target,
        "details": json.dumps(record.details, ensure_ascii=False, sort_keys=True) if record.details else "",
    }


def _actions(org: Organisation) -> list[str]:
    names = AuditRecord.objects.filter(org=org).values_list("action", flat=True).distinct().order_by("action")
    return list(names[:ACTIONS_OFFERED])


@login_required
@require_POST
def audit_export(request: HttpRequest, slug: str) -> HttpResponse:
    org = _organisation(request, slug)
    try:
        filters = parse_audit_filters(request.POST)
        export = export_audit(user=_user(request), org=org, filters=filters, fmt=request.POST.get("format", ""))
    except DomainError as error:
        messages.error(request, f"Nothing was exported: {error.message}")
        kept = {key: request.POST[key][:200] for key in FILTER_KEYS if request.POST.get(key)}
        return HttpResponseRedirect(f"{reverse('audit-trail', args=[org.slug])}?{urlencode(kept)}")
    response = HttpResponse(export.content, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response
