"""The organisation-scoped admin that every app's ModelAdmin builds on.

An organisation admin is a staff user with the admin role in a membership; an operator is a
superuser. For every model registered through ``OrgScopedAdmin``:

- rows: an organisation admin sees their organisations' rows only; personal rows (the
  ``shared_only`` path) are hidden from everyone, operators included: they belong to their owners;
- choices: every ForeignKey and ManyToMany field offers only the rows the admin may see in that
  model's own admin (users: members of their organisations; groups: their organisations' groups);
- saving: every related row must belong to the row's own organisation, whoever submits the form
  (a crafted id of another organisation's row is a form error), and a row never moves from one
  organisation to another;
- every add, change and delete through a form leaves an audit record with the old and new values.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from django import forms
from django.contrib import admin
from django.contrib.admin.exceptions import NotRegistered
from django.contrib.admin.widgets import ForeignKeyRawIdWidget
from django.contrib.auth.models import Group, User
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from brain.core import services
from brain.core.actors import Actor
from brain.core.audit import record_audit, shown
from brain.models import Membership, Organisation

HIDDEN = "(changed, not shown)"


def staff_user(request: HttpRequest) -> User:
    """The logged-in user of an admin page (the admin site lets nobody else in)."""
    return cast(User, request.user)


def admin_org_ids(request: HttpRequest) -> list[int]:
    if not request.user.is_authenticated:
        return []  # the admin's own login page lists apps before anyone is logged in
    return list(Membership.objects.filter(user=request.user, role=Membership.ADMIN).values_list("org_id", flat=True))


def admin_actor(request: HttpRequest, org: Organisation) -> Actor:
    """The actor for an admin action: an operator acts as an admin of any organisation."""
    user = staff_user(request)
    if user.is_superuser:
        return Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via="admin", role="admin")
    return services.actor_for_user(org=org, user=user, via="admin")


def org_id_of(obj: models.Model, path: str) -> int | None:
    """The organisation id of a row, following an ``org_field`` path such as ``skill__org``."""
    if path == "pk":
        return cast(int | None, obj.pk)
    *hops, last = path.split("__")
    target: Any = obj
    for hop in hops:
        target = getattr(target, hop, None)
        if target is None:
            return None
    return cast(int | None, getattr(target, f"{last}_id", None))


class ScopedRawIdWidget(ForeignKeyRawIdWidget):
    """A raw-id box that names the chosen row only when the admin may see it.

    Django's widget looks the id up among all rows, so a form sent back with an error would
    show the title of another organisation's row next to the crafted id.
    """

    def __init__(self, *args: Any, queryset: QuerySet[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queryset = queryset

    def label_and_url_for_value(self, value: Any) -> tuple[str, str]:
        key = self.rel.get_related_field().name
        try:
            if not self.queryset.filter(**{key: value}).exists():
                return "", ""
        except (ValueError, TypeError, ValidationError):
            return "", ""
        return super().label_and_url_for_value(value)


class SameOrganisationForm(forms.ModelForm):
    """Refuses related rows of any organisation but the row's own, whoever submits the form."""

    org_paths: ClassVar[dict[str, str]] = {}  # form field -> lookup from the related model to its organisation
    row_org_field: ClassVar[str] = "org"

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        org_id = self.row_org_id(cleaned)
        if org_id is None:
            return cleaned
        for name, path in self.org_paths.items():
            value = cleaned.get(name)
            rows = list(value) if isinstance(value, QuerySet | list | tuple) else [] if value is None else [value]
            if not rows:
                continue
            model = type(rows[0])
            wanted = {row.pk for row in rows}
            found = set(model._default_manager.filter(pk__in=wanted, **{path: org_id}).values_list("pk", flat=True))
            if wanted - found:
                self.add_error(name, "Choose only rows of this organisation.")
        return cleaned

    def row_org_id(self, cleaned: dict[str, Any]) -> int | None:
        chosen = cleaned.get(self.row_org_field) if self.row_org_field != "pk" else None
        if isinstance(chosen, Organisation):
            return chosen.pk
        return org_id_of(self.instance, self.row_org_field)


class OrgScopedAdmin(admin.ModelAdmin):
    """Rows, choices, saving and the audit trail of an organisation's data; see the module docstring."""

    org_field = "org"
    shared_only: str | None = None  # lookup to a scope column: rows whose scope is personal are hidden
    form = SameOrganisationForm
    any_org_fields: tuple[str, ...] = ()  # related rows that may belong to another of the admin's organisations
    audit_hidden_fields: tuple[str, ...] = ()  # changed, but too secret to copy into the audit trail
    audit_form_writes = True  # False where a service writes (and audits) the change itself

    # --- rows ---------------------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if self.shared_only:
            qs = qs.filter(**{self.shared_only: "shared"})
        if request.user.is_superuser:
            return qs
        return qs.filter(**{f"{self.org_field}__in": admin_org_ids(request)})

    def get_list_filter(self, request: HttpRequest) -> Any:
        # The organisation switcher: operators filter any list by organisation.
        filters = list(super().get_list_filter(request))
        if request.user.is_superuser and self.org_field != "pk":
            return [self.org_field, *filters]
        return filters

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and self.org_field == "org" and "org" not in fields:
            fields.append("org")  # a row never moves to another organisation
        return fields

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # A new row starts in the admin's organisation when they administer only one.
        initial: dict[str, Any] = dict(super().get_changeform_initial_data(request))
        if self.org_field == "org" and "org" not in initial and not request.user.is_superuser:
            orgs = admin_org_ids(request)
            if len(orgs) == 1:
                initial["org"] = orgs[0]
        return initial

    # --- choices ------------------------------------------------------------------------------

    def choices(self, request: HttpRequest, model: type[models.Model]) -> QuerySet[Any]:
        """The rows of ``model`` this staff user may pick on a form."""
        manager = model._default_manager
        if model is User:
            if request.user.is_superuser:
                return manager.all()
            return manager.filter(pk__in=Membership.objects.filter(org__in=admin_org_ids(request)).values("user"))
        if model is Group:
            if request.user.is_superuser:
                return manager.all()
            return manager.filter(organisation_link__org__in=admin_org_ids(request))
        try:
            related_admin = self.admin_site.get_model_admin(model)
        except NotRegistered:
            related_admin = None
        if isinstance(related_admin, OrgScopedAdmin):
            return related_admin.get_queryset(request)
        return manager.all() if request.user.is_superuser else manager.none()

    def org_path(self, model: type[models.Model]) -> str | None:
        """The lookup from a related model to its organisation, for checking a submitted row."""
        if model is Organisation:
            return None  # the row's own organisation field; its choices are already the admin's
        if model is User:
            return "memberships__org"
        if model is Group:
            return "organisation_link__org"
        try:
            related_admin = self.admin_site.get_model_admin(model)
        except NotRegistered:
            related_admin = None
        if isinstance(related_admin, OrgScopedAdmin):
            return related_admin.org_field
        return "org" if any(f.name == "org" for f in model._meta.fields) else None

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        queryset = kwargs.setdefault("queryset", self.choices(request, db_field.related_model))
        if db_field.name in self.raw_id_fields and "widget" not in kwargs:
            kwargs["widget"] = ScopedRawIdWidget(db_field.remote_field, self.admin_site, queryset=queryset)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        kwargs.setdefault("queryset", self.choices(request, db_field.related_model))
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = cast(type[SameOrganisationForm], super().get_form(request, obj, change, **kwargs))
        paths = {}
        for name, field in form.base_fields.items():
            skip = name in (self.org_field, *self.any_org_fields)
            if isinstance(field, forms.ModelChoiceField) and field.queryset is not None and not skip:
                path = self.org_path(field.queryset.model)
                if path is not None:
                    paths[name] = path
        form.org_paths = paths
        form.row_org_field = self.org_field
        return form

    # --- permissions --------------------------------------------------------------------------

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser or admin_org_ids(request))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    # --- the audit trail ----------------------------------------------------------------------

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if self.audit_form_writes:
            self.audit_form(request, form, formsets, change)

    def audit_form(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        fields = self.form_changes(form, change)
        for formset in formsets:
            for inline_form in formset.forms:
                for name, values in self.form_changes(inline_form, change).items():
                    fields[f"{inline_form._meta.model._meta.model_name}.{name}"] = values
        org_id = org_id_of(form.instance, self.org_field)
        if (change and not fields) or org_id is None:
            return
        record_audit(
            actor=staff_user(request),
            org=Organisation.objects.get(pk=org_id),
            action=f"{self.opts.model_name}.{'changed' if change else 'added'}",
            target=target_of(form.instance),
            details={"fields": fields},
        )

    def form_changes(self, form: Any, change: bool) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        for name in form.changed_data:
            if name in self.audit_hidden_fields:
                changes[name] = HIDDEN
                continue
            before = shown(form.initial.get(name)) if change else None
            changes[name] = {"from": before, "to": shown(form.cleaned_data.get(name))}
        return changes

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            self.audit_deletion(request, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with transaction.atomic():
            for obj in queryset:
                self.audit_deletion(request, obj)
            super().delete_queryset(request, queryset)

    def audit_deletion(self, request: HttpRequest, obj: Any) -> None:
        org_id = org_id_of(obj, self.org_field)
        if org_id is None or self.org_field == "pk":
            return  # an organisation's own records go with it; Django's admin log keeps the deletion
        record_audit(
            actor=staff_user(request),
            org=Organisation.objects.get(pk=org_id),
            action=f"{self.opts.model_name}.deleted",
            target=target_of(obj),
            details={"was": shown(str(obj))},
        )


class ReadOnlyInline(admin.TabularInline):
    """Rows shown under their parent and never edited there (a skill's versions, the further places a
    promise was said): the parent's admin already decided who may see them."""

    extra = 0

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class OperatorsOnlyAdmin(admin.ModelAdmin):
    """Brain's own machinery (Celery beat's schedule tables): operators see and change it;
    organisation admins never do, whatever permissions a group may have given them."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser) and super().has_view_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser) and super().has_change_permission(request, obj)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser) and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser) and super().has_delete_permission(request, obj)


def for_operators_only(*models_: type[models.Model], site: admin.AdminSite = admin.site) -> None:
    """Keep each model's registered admin, with ``OperatorsOnlyAdmin``'s permissions over it."""
    for model in models_:
        current = type(site.get_model_admin(model))
        site.unregister(model)
        site.register(model, type(f"OperatorsOnly{current.__name__}", (OperatorsOnlyAdmin, current), {}))


def target_of(obj: models.Model) -> str:
    public_id = getattr(obj, "public_id", None)
    if isinstance(public_id, str):
        return public_id
    return f"{obj._meta.model_name} {obj.pk}"
