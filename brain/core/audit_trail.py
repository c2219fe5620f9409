"""Reading the audit trail: one organisation's records, filtered, for its admins' page and export.

Who may read it: the organisation's admins and operators (``list_administered_organisations``);
for anyone else another organisation's trail is "not found". Filters go into the query beside
the organisation: an action prefix (``token.`` or ``token.revoked``), who acted (part of the
name kept on the record), the interface, a range of days in the organisation's zone (both days
included) and a piece of the target. Records come newest first.

An export is itself an act an admin may want to know of, so ``export_audit`` writes
``audit.exported`` with the filters and the count, in the transaction that reads the records.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet

from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound
from brain.core.inputs import text_problem
from brain.core.selectors import list_administered_organisations
from brain.faces.times import zone_of
from brain.models import AuditRecord, Organisation

FILTER_MAX = 200  # characters of a text filter: longer than any action, name or target kept
INTERFACES = ("web", "admin", "mcp", "api", "command", "nightly", "sso")
EXPORT_MAX = 100_000  # records in one export; narrow the filters for more
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
COLUMNS = ("time", "who", "via", "action", "target", "details")


@dataclass(frozen=True)
class AuditFilters:
    """What a reader narrowed the trail to; empty strings and None mean "any"."""

    action: str = ""
    person: str = ""
    via: str = ""
    since: date | None = None
    until: date | None = None
    target: str = ""

    def as_params(self) -> dict[str, str]:
        """The filters as the page's query string spells them (only those set)."""
        return {key: str(value) for key, value in asdict(self).items() if value not in ("", None)}


def parse_audit_filters(params: Mapping[str, str]) -> AuditFilters:
    """Filters from a page's query string; a value that cannot be one is refused in words."""
    texts = {}
    for key, label in (("action", "action"), ("person", "person"), ("target", "target")):
        value = (params.get(key) or "").strip()
        if len(value) > FILTER_MAX:
            raise InvalidArgument(f"The {label} filter is longer than {FILTER_MAX} characters; shorten it.")
        if problem := text_problem(value):
            raise InvalidArgument(f"The {label} filter {problem}.")
        texts[key] = value
    via = (params.get("via") or "").strip()
    if via and via not in INTERFACES:
        raise InvalidArgument(f"Choose an interface among {', '.join(INTERFACES)}, or none for all.")
    since, until = _day(params, "since", "from"), _day(params, "until", "to")
    if since and until and since > until:
        raise InvalidArgument(f"The range starts ({since}) after it ends ({until}); swap the two days.")
    return AuditFilters(via=via, since=since, until=until, **texts)


def _day(params: Mapping[str, str], key: str, label: str) -> date | None:
    value = (params.get(key) or "").strip()
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10]) if len(value) == 10 else date.fromisoformat(value)
    except ValueError:
        shown = value[:40]
        raise InvalidArgument(f"The '{label}' day {shown!r} is not a day; write it as YYYY-MM-DD.") from None


def get_audited_organisation(*, user: User, slug: str) -> Organisation:
    """The organisation whose trail ``user`` asks for; "not found" unless they administer it."""
    org = list_administered_organisations(user=user).filter(slug=slug).first()
    if org is None:
        raise NotFound(f"No organisation {slug[:64]!r} among those you administer.")
    return org


def list_audit_records(*, org: Organisation, filters: AuditFilters) -> QuerySet[AuditRecord]:
    """The organisation's records that match ``filters``, newest first."""
    records = AuditRecord.objects.filter(org=org)
    if filters.action:
        records = records.filter(action__istartswith=filters.action)
    if filters.person:
        records = records.filter(who__icontains=filters.person)
    if filters.via:
        records = records.filter(via=filters.via)
    if filters.target:
        records = records.filter(target__icontains=filters.target)
    zone = zone_of(org)
    if filters.since and filters.since > date.min:  # the first day there is starts nothing
        records = records.filter(created_at__gte=datetime.combine(filters.since, time.min, zone))
    if filters.until and filters.until < date.max:  # the last day there is ends nothing
        records = records.filter(created_at__lt=datetime.combine(filters.until + timedelta(days=1), time.min, zone))
    return records.order_by("-created_at", "-pk")


def record_row(record: AuditRecord, org: Organisation) -> dict[str, Any]:
    """One record as an export writes it: the time in the organisation's zone with its offset."""
    return {
        "time": record.created_at.astimezone(zone_of(org)).isoformat(timespec="seconds"),
        "who": record.who,
        "via": record.via,
        "action": record.action,
        "target": record.target,
        "details": record.details,
    }


@dataclass(frozen=True)
class AuditExport:
    """An export's text, what it is, and how many records it holds."""

    content: str
    content_type: str
    filename: str
    count: int


@transaction.atomic
def export_audit(*, user: User, org: Organisation, filters: AuditFilters, fmt: str) -> AuditExport:
    """The filtered records as CSV or JSON Lines, newest first, and an ``audit.exported`` record
    saying who took them. The export does not hold its own record."""
    if fmt not in FORMATS:
        raise InvalidArgument(f"Choose an export format among {', '.join(FORMATS)}.")
    records = list(list_audit_records(org=org, filters=filters)[: EXPORT_MAX + 1])
    if len(records) > EXPORT_MAX:
        raise InvalidArgument(
            f"More than {EXPORT_MAX:,} records match; narrow the days or the action and export in parts."
        )
    rows = [record_row(record, org) for record in records]
    content = _csv(rows) if fmt == "csv" else "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    record_audit(
        actor=user,
        org=org,
        via="web",
        action="audit.exported",
        target=f"audit trail of {org.slug}",
        details={"format": fmt, "records": len(rows), "filters": filters.as_params()},
    )
    return AuditExport(
        content=content,
        content_type=FORMATS[fmt],
        filename=f"audit-{org.slug}-{date.today().isoformat()}.{fmt}",
        count=len(rows),
    )


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    for row in rows:
        cells = [row[column] for column in COLUMNS[:-1]]
        writer.writerow([_safe_cell(str(cell)) for cell in cells] + [json.dumps(row["details"], ensure_ascii=False)])
    return out.getvalue()


def _safe_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting with = + - @ would be read as a formula."""
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
