"""Write one organisation's archive (``manage.py export_org``): every exported model's rows with
their ids and foreign keys as they are here, the people and groups those rows name, and a manifest.
Read in one snapshot (a repeatable-read transaction), so rows written meanwhile never leave an
archive naming what it does not hold."""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import connection, models, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models.functions import Cast
from django.utils import timezone

from brain.core.audit import record_audit
from brain.models import Organisation
from brain.portability import archive
from brain.portability.decisions import GROUP, USER, Exported, exported, label, org_rows

USER_FIELDS = ("username", "email", "first_name", "last_name")
BATCH = 1000


def plain(value: Any) -> Any:
    """A field's value as JSON holds it: dates in ISO 8601."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    if isinstance(value, bytes | memoryview):
        raise TypeError("binary fields are not exported")
    return value


def written_fields(model: type[models.Model], decision: Exported) -> list[models.Field[Any, Any]]:
    """The columns of ``model`` an archive holds: every stored field but generated ones and those omitted."""
    return [
        f
        for f in model._meta.concrete_fields
        if not getattr(f, "generated", False) and f.name not in decision.omit and f.name != "id"
    ]


def is_vector(f: models.Field[Any, Any]) -> bool:
    return type(f).__name__ == "VectorField"


def m2m_fields(model: type[models.Model]) -> list[models.ManyToManyField[Any, Any]]:
    return [f for f in model._meta.many_to_many if isinstance(f, models.ManyToManyField)]


def export_organisation(*, org: Organisation, target: Path) -> dict[str, Any]:
    """Write ``org``'s archive to ``target`` (a .tar.gz) and record that it was exported."""
    outermost = not connection.in_atomic_block
    with transaction.atomic(), tempfile.TemporaryDirectory(prefix="brain-export-") as tmp:
        if outermost:  # one snapshot for every table (inside a caller's transaction, the caller's)
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        folder = Path(tmp)
        users: set[int] = set()
        files: dict[str, dict[str, Any]] = {}
        for model, decision in exported():
            name = label(model)
            if name in (USER, GROUP):
                continue
            rows = org_rows(model, decision, org.pk).order_by("pk")
            files[f"{name}.jsonl"] = _write(folder / f"{name}.jsonl", _rows(model, decision, rows, users))
        groups = _groups(org)
        files[f"{GROUP}.jsonl"] = _write(
            folder / f"{GROUP}.jsonl", (_line({"id": g.pk, "name": g.name}) for g in groups)
        )
        users |= set(User.objects.filter(memberships__org=org).values_list("pk", flat=True))
        people = User.objects.filter(pk__in=users).order_by("pk").prefetch_related("groups")
        group_ids = {g.pk for g in groups}
        files[f"{USER}.jsonl"] = _write(folder / f"{USER}.jsonl", (_line(_person(u, group_ids)) for u in people))
        manifest = {
            "format": archive.FORMAT,
            "version": archive.VERSION,
            "created_at": timezone.now().isoformat(),
            "organisation": {"id": org.pk, "slug": org.slug, "name": org.name},
            "migrations": _migrations(),
            "counts": {name.removesuffix(".jsonl"): entry["rows"] for name, entry in files.items()},
            "files": files,
        }
        archive.write(target, folder, manifest)
        record_audit(
            actor=None,
            org=org,
            action="organisation.exported",
            target=org.slug,
            details={"archive": target.name, "rows": sum(entry["rows"] for entry in files.values())},
        )
    return manifest


def _rows(model: type[models.Model], decision: Exported, rows: models.QuerySet[Any], users: set[int]) -> Iterable[str]:
    vectors = [f for f in written_fields(model, decision) if is_vector(f)]
    fields = [f for f in written_fields(model, decision) if not is_vector(f)]
    people = [f.attname for f in fields if f.is_relation and f.related_model is User]
    many = m2m_fields(model)
    if many:
        rows = rows.prefetch_related(*(f.name for f in many))
    # Vectors as Postgres writes them, "[0.0123,-0.5,...]": a JSON list of the shortest decimals that
    # give back the same 32-bit numbers, put into the line as they come (no parsing, no rounding).
    as_text = {f"portable_{f.attname}": Cast(f.attname, output_field=models.TextField()) for f in vectors}
    rows = rows.defer(*(f.name for f in vectors)).annotate(**as_text)
    for obj in rows.iterator(chunk_size=BATCH):
        row = {"id": obj.pk} | {f.attname: plain(getattr(obj, f.attname)) for f in fields}
        for f in many:
            row[f.name] = sorted(related.pk for related in getattr(obj, f.name).all())
        users.update(row[name] for name in people if row[name] is not None)
        line = _line(row)
        for vector in vectors:
            text = getattr(obj, f"portable_{vector.attname}")
            line = f'{line[:-1]},"{vector.attname}":{text if text is not None else "null"}}}'
        yield line


def _groups(org: Organisation) -> list[Group]:
    """The permission groups of the organisation: tied to it, or chosen for one of its categories."""
    tied = models.Q(organisation_link__org=org) | models.Q(brain_categories__org=org)
    return list(Group.objects.filter(tied).distinct().order_by("pk"))


def _person(user: User, group_ids: set[int]) -> dict[str, Any]:
    return (
        {"id": user.pk}
        | {name: getattr(user, name) for name in USER_FIELDS}
        | {"groups": sorted(g.pk for g in user.groups.all() if g.pk in group_ids)}
    )


def _line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _write(path: Path, lines: Iterable[str]) -> dict[str, Any]:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")
    return archive.file_entry(path)


def _migrations() -> dict[str, list[str]]:
    """The migrations applied here, by app: the schema the rows were written in."""
    applied: dict[str, list[str]] = {}
    for app, name in sorted(MigrationRecorder(connection).applied_migrations()):
        applied.setdefault(app, []).append(name)
    return applied
