"""Load an archive into this installation as a new organisation (``manage.py import_org``).

Everything happens in one transaction: a refused archive leaves nothing behind. Every row gets a new
id and every foreign key is turned from the archive's id to the new one; a key to something the
archive does not hold (a token, a call record) is left empty. Vectors are kept as they were, with the
model that made them, and the new organisation serves searches with that model, so it answers the
same searches without embedding anything again. People are matched by e-mail address to accounts
that exist here; someone with no account here gets one, inactive and without a password.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import IntegrityError, connection, models, transaction
from django.db.migrations.recorder import MigrationRecorder

from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument
from brain.core.services import create_organisation
from brain.infra.ids import format_id
from brain.models import Organisation
from brain.portability import archive
from brain.portability.decisions import DECISIONS, GROUP, PUBLIC_PREFIXES, USER, Exported, exported, label
from brain.portability.exporting import USER_FIELDS, is_vector, m2m_fields, written_fields

ORGANISATION = "brain.organisation"
BATCH = 500


@dataclass
class Imported:
    org: Organisation
    counts: dict[str, int]
    people_matched: int = 0
    people_created: int = 0


@dataclass
class _Ids:
    """The archive's ids and the new ones, by model; and the keys filled in once every row is in."""

    new: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    later: list[tuple[type[models.Model], int, str, str, int]] = field(default_factory=list)

    def of(self, target: str, old: int, where: str) -> int:
        try:
            return self.new[target][old]
        except KeyError:
            raise InvalidArgument(f"{where} refers to {target} {old}, which the archive does not hold.") from None


def import_organisation(*, path: Path, slug: str, name: str = "", plan: str | None = None) -> Imported:
    """Make the organisation ``slug`` from the archive at ``path``; refuse the archive in words if it
    is of another format, cut short, changed, or written by a newer Brain."""
    try:
        validate_slug(slug)
    except ValidationError:
        raise InvalidArgument(f"{slug!r} is not a slug: use letters, digits, hyphens and underscores.") from None
    with archive.opened(path) as source:
        try:
            return _import(source, path=path, slug=slug, name=name, plan=plan)
        except IntegrityError as e:  # rows that cannot stand together: two people with one address, say
            raise InvalidArgument(
                f"The archive's rows break a rule of this database, and nothing was made: {e}"
            ) from None


def _import(source: archive.Archive, *, path: Path, slug: str, name: str, plan: str | None) -> Imported:
    _refuse_newer_schema(source.manifest)
    _refuse_unknown_files(source.manifest)
    with transaction.atomic():
        org_row = _the_organisation(source)
        org = create_organisation(
            slug=slug, name=name or org_row["name"], language=org_row.get("language", "en"), plan=plan
        )
        done = Imported(org=org, counts={})
        ids = _Ids()
        ids.new[ORGANISATION][org_row["id"]] = org.pk
        _update_organisation(org, org_row, name)
        _groups(source, org, ids)
        _people(source, ids, done)
        for model, decision in exported():
            if label(model) not in (ORGANISATION, USER, GROUP):
                done.counts[label(model)] = _load(source, model, decision, org, ids)
        _fill_later(ids)
        _memberships_of_groups(source, ids)
        record_audit(
            actor=None,
            org=org,
            action="organisation.imported",
            target=org.slug,
            details={
                "from": source.manifest["organisation"].get("slug", ""),
                "archive": path.name,
                "rows": sum(done.counts.values()),
                "people_matched": done.people_matched,
                "people_created": done.people_created,
            },
        )
    return done


def _refuse_newer_schema(manifest: dict[str, Any]) -> None:
    applied = MigrationRecorder(connection).applied_migrations()
    for app, names in sorted(manifest.get("migrations", {}).items()):
        missing = [n for n in names if (app, n) not in applied]
        if missing:
            raise InvalidArgument(
                f"The archive was written by a newer Brain: migration {app}.{missing[0]} is not applied here. "
                "Upgrade this installation (manage.py migrate) and import it again."
            )


def _refuse_unknown_files(manifest: dict[str, Any]) -> None:
    known = {f"{label(model)}.jsonl" for model, _ in exported()}
    unknown = sorted(set(manifest["files"]) - known)
    if unknown:
        raise InvalidArgument(
            f"The archive holds {', '.join(unknown)}, which this Brain does not import: "
            "it was written by another version of Brain, or changed."
        )


def _the_organisation(source: archive.Archive) -> dict[str, Any]:
    rows = list(source.rows(ORGANISATION))
    if len(rows) != 1 or rows[0]["id"] != source.manifest["organisation"].get("id"):
        raise InvalidArgument("The archive must hold exactly the one organisation its manifest names.")
    return rows[0]


def _update_organisation(org: Organisation, row: dict[str, Any], name: str) -> None:
    decision = DECISIONS[ORGANISATION]
    if not isinstance(decision, Exported):
        raise TypeError("the organisation's own row is always exported")
    values = _values(Organisation, decision, row, org, _Ids(), where=f"{ORGANISATION} {row['id']}")
    values.pop("name" if name else "", None)
    for attname, value in values.items():
        setattr(org, attname, value)
    try:
        org.full_clean(exclude=["slug"])  # the archive's time zone or embedder may be one this Brain does not know
    except ValidationError as e:
        raise InvalidArgument(f"The archive's organisation cannot be made here: {'; '.join(e.messages)}") from None
    org.save()


def _groups(source: archive.Archive, org: Organisation, ids: _Ids) -> None:
    for row in source.rows(GROUP):
        wanted = str(row.get("name", ""))[:150] or f"group {row['id']}"
        name, n = wanted, 1
        while Group.objects.filter(name=name).exists():
            n += 1
            suffix = f" ({org.slug}{'' if n == 2 else f' {n - 1}'})"
            name = wanted[: 150 - len(suffix)] + suffix
        ids.new[GROUP][row["id"]] = Group.objects.create(name=name).pk


def _people(source: archive.Archive, ids: _Ids, done: Imported) -> None:
    for row in source.rows(USER):
        email = str(row.get("email") or "").strip()
        matches = list(User.objects.filter(email__iexact=email)[:2]) if email else []
        if len(matches) == 1:
            ids.new[USER][row["id"]] = matches[0].pk
            done.people_matched += 1
            continue
        user = User(**{name: str(row.get(name) or "") for name in USER_FIELDS}, is_active=False)
        user.username = _free_username(user.username or f"person-{row['id']}", done.org.slug)
        user.set_unusable_password()
        user.save()
        ids.new[USER][row["id"]] = user.pk
        done.people_created += 1


def _free_username(wanted: str, slug: str) -> str:
    name, n = wanted[:150], 1
    while User.objects.filter(username=name).exists():
        n += 1
        suffix = f"-{slug}" if n == 2 else f"-{slug}-{n - 1}"
        name = wanted[: 150 - len(suffix)] + suffix
    return name


def _memberships_of_groups(source: archive.Archive, ids: _Ids) -> None:
    through = User.groups.through
    links = [
        through(user_id=ids.new[USER][row["id"]], group_id=ids.of(GROUP, old, f"{USER} {row['id']}"))
        for row in source.rows(USER)
        for old in row.get("groups", [])
    ]
    through.objects.bulk_create(links, ignore_conflicts=True, batch_size=BATCH)


def _load(source: archive.Archive, model: type[models.Model], decision: Exported, org: Organisation, ids: _Ids) -> int:
    name, count = label(model), 0
    batch: list[tuple[int, models.Model, dict[str, list[int]]]] = []
    for row in source.rows(name):
        where = f"{name} {row['id']}"
        values = _values(model, decision, row, org, ids, where=where) | dict(decision.imported_as)
        for json_field, keys in decision.json_refs:
            values[json_field] = _json_refs(values.get(json_field), dict(keys), ids)
        for text_field, target in decision.pair_refs:
            values[text_field] = _pair(values.get(text_field), target, ids)
        if decision.mark is not None:
            mark_field, which, read = decision.mark
            values[mark_field] = _mark(values.get(mark_field), dict(read).get(values.get(which, "")), ids)
        many = {f.name: row.get(f.name, []) for f in m2m_fields(model)}
        if decision.existing is not None:
            found = model._default_manager.filter(org=org, **{k: values[k] for k in decision.existing}).first()
            if found is not None:
                for attname, value in values.items():
                    setattr(found, attname, value)
                found.save()
                _remember(ids, model, row["id"], found, many)
                count += 1
                continue
        batch.append((row["id"], model(**values), many))
        if len(batch) >= BATCH:
            count += _insert(model, batch, ids)
            batch = []
    return count + _insert(model, batch, ids)


def _insert(model: type[models.Model], batch: list[tuple[int, models.Model, dict[str, list[int]]]], ids: _Ids) -> int:
    model._default_manager.bulk_create([obj for _, obj, _ in batch])
    for old, obj, many in batch:
        _remember(ids, model, old, obj, many)
    return len(batch)


def _remember(ids: _Ids, model: type[models.Model], old: int, obj: models.Model, many: dict[str, list[int]]) -> None:
    name = label(model)
    if old in ids.new[name]:
        raise InvalidArgument(f"The archive holds {name} {old} twice.")
    ids.new[name][old] = obj.pk
    for field_name, olds in many.items():
        m2m = model._meta.get_field(field_name)
        target = label(m2m.related_model)  # type: ignore[arg-type]
        through = getattr(model, field_name).through
        source_column, target_column = m2m.m2m_column_name(), m2m.m2m_reverse_name()  # type: ignore[union-attr]
        through.objects.bulk_create(
            [through(**{source_column: obj.pk, target_column: ids.of(target, o, f"{name} {old}")}) for o in olds]
        )


def _values(
    model: type[models.Model], decision: Exported, row: dict[str, Any], org: Organisation, ids: _Ids, *, where: str
) -> dict[str, Any]:
    """The new row's field values: the archive's, with every key turned to the new ids."""
    fields = written_fields(model, decision)
    known = {f.attname for f in fields} | {"id"} | {f.name for f in m2m_fields(model)}
    unknown = sorted(set(row) - known)
    if unknown:
        raise InvalidArgument(
            f"{where} has fields this Brain does not know ({', '.join(unknown)}): the archive was written by "
            "another version of Brain. Upgrade this installation and import it again."
        )
    order = list(DECISIONS)
    values: dict[str, Any] = {}
    for f in fields:
        if f.attname not in row:
            continue
        value = row[f.attname]
        if f.unique and f.has_default() and callable(f.default):
            values[f.attname] = f.get_default()  # an id unique across the installation: a new one
        elif not f.is_relation or value is None:
            values[f.attname] = _python(f, value, where)
        else:
            target = label(f.related_model)  # type: ignore[arg-type]
            if target == ORGANISATION:
                values[f.attname] = org.pk if value in ids.new[ORGANISATION] else _foreign(where, f.name)
            elif not isinstance(DECISIONS.get(target), Exported):
                values[f.attname] = None  # a token, a call record, a connection: they stay behind
            elif target not in (USER, GROUP) and order.index(target) >= order.index(label(model)):
                ids.later.append((model, row["id"], f.attname, target, value))
                values[f.attname] = None
            else:
                values[f.attname] = ids.of(target, value, where)
    return values


def _json_refs(value: Any, keys: dict[str, str], ids: _Ids) -> Any:
    """A JSON list of objects with the ids under ``keys`` turned to the new ones (empty when the
    archive does not hold the row: a reference is never left pointing at another row here)."""
    if not isinstance(value, list):
        return value
    turned = []
    for item in value:
        if isinstance(item, dict):
            item = dict(item)
            for key, target in keys.items():
                if key in item:
                    item[key] = _new_ref(item[key], target, ids)
        turned.append(item)
    return turned


def _new_ref(old: Any, target: str, ids: _Ids) -> Any:
    if target and isinstance(old, int) and not isinstance(old, bool):
        return ids.new[target].get(old)
    if not target and isinstance(old, str):
        prefix, _, number = old.rpartition("_")
        model = PUBLIC_PREFIXES.get(prefix)
        new = ids.new[model].get(int(number)) if model and number.isdigit() else None
        return format_id(prefix, new) if new is not None else None
    return None if old is not None else old


def _pair(value: Any, target: str, ids: _Ids) -> Any:
    """``"12:34"`` of old ids as the same pair of new ids, smaller first; empty when not both are held."""
    if not isinstance(value, str) or not value:
        return value
    olds = value.split(":")
    news = [ids.new[target].get(int(old)) if old.isdigit() else None for old in olds]
    if len(news) != 2 or None in news:
        return ""
    return ":".join(str(new) for new in sorted(n for n in news if n is not None))


def _mark(value: Any, target: str | None, ids: _Ids) -> Any:
    """The new id of the last row of ``target`` at or before the old mark (0 before any)."""
    if target is None or not isinstance(value, int):
        return 0
    read = [old for old in ids.new[target] if old <= value]
    return ids.new[target][max(read)] if read else 0


def _foreign(where: str, field_name: str) -> int:
    raise InvalidArgument(f"{where} belongs to another organisation than the archive's ({field_name}).")


def _python(f: models.Field[Any, Any], value: Any, where: str) -> Any:
    if value is None:
        return None  # a column that may be empty is; one that may not is refused by the database
    if is_vector(f):
        size = getattr(f, "dimensions", None)
        if not isinstance(value, list) or (size is not None and len(value) != size):
            raise InvalidArgument(f"{where}: {f.name} is not a list of {size} numbers.")
        return value  # each number is checked as it is written
    try:
        return f.to_python(value)
    except Exception as e:  # a field's own parser says what it could not read
        raise InvalidArgument(f"{where}: {f.name} cannot be read ({e}).") from None


def _fill_later(ids: _Ids) -> None:
    """The keys to rows that came later in the archive (a document's next version, a skill's current one)."""
    by_model: dict[type[models.Model], dict[int, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for model, old, attname, target, value in ids.later:
        where = f"{label(model)} {old}"
        by_model[model][ids.new[label(model)][old]][attname] = ids.of(target, value, where)
    for model, rows in by_model.items():
        for pk, values in rows.items():
            model._default_manager.filter(pk=pk).update(**values)
