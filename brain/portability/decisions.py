"""What an organisation's archive holds: a decision for every model of every app.

Each model is either ``Exported`` (its rows go into the archive, in this order, which is the order
an import inserts them) or ``Skipped`` with the reason. Both say how a row finds its organisation
(an ORM lookup from the model to the organisation's id), or that a row belongs to no single
organisation, so that the deletion of an organisation can be checked table by table.
``brain/tests/test_portability.py`` fails when a model is in neither list, so a new model with an
organisation's data cannot be left out of an archive unnoticed.

Models are named by their label (``memory.document``), not imported: the core decides for the apps
above it without depending on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db import models


@dataclass(frozen=True)
class Exported:
    """Rows go into the archive. ``org`` leads from the model to its organisation's id.

    ``omit`` names fields left out of the archive (a secret, or a state only this installation
    understands); an import gives them their default. ``existing`` names the fields, besides the
    organisation, that find a row the new organisation already has (its default category, its
    switches): that row takes the archive's values instead of a second one being added.
    ``imported_as`` sets fields on every imported row whatever the archive says. ``json_refs`` names
    the JSON fields that are lists of objects holding ids of other rows: for each, the keys and the
    model a number under that key is an id of (empty: a public id such as ``chunk_12``, its prefix
    says of what; ``PUBLIC_PREFIXES``). ``pair_refs`` names text fields holding ``"<id>:<id>"`` of a
    model. ``mark`` is a field holding how far a scan read (the highest id it saw), the field that
    says which scan, and the model each scan reads: it becomes the new id of the last row read, as
    an import keeps the order of ids."""

    org: str
    omit: tuple[str, ...] = ()
    existing: tuple[str, ...] | None = None
    imported_as: tuple[tuple[str, object], ...] = ()
    json_refs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    pair_refs: tuple[tuple[str, str], ...] = ()
    mark: tuple[str, str, tuple[tuple[str, str], ...]] | None = None


@dataclass(frozen=True)
class Skipped:
    """Rows stay behind, for ``why``. ``org`` leads to the organisation when rows belong to one."""

    why: str
    org: str | None = None


Decision = Exported | Skipped

# The prefixes of public ids (brain.infra.ids.format_id) that JSON fields hold, and their models.
PUBLIC_PREFIXES = {"chunk": "memory.chunk", "mem": "memory.fact", "doc": "memory.document"}

# The people and groups an archive holds are chosen by what the exported rows name (brain.portability.exporting).
USER, GROUP = "auth.user", "auth.group"

DECISIONS: dict[str, Decision] = {
    # Exported, in the order an import inserts them: a row's foreign keys point to rows before it,
    # or are filled in once every row is in (a row's later versions, a skill's current version).
    "brain.organisation": Exported(org="pk", omit=("slug", "embedder_next", "ingestion_paused_at")),
    GROUP: Exported(org="organisation_link__org"),
    USER: Exported(org="memberships__org"),
    "brain.membership": Exported(org="org"),
    "brain.category": Exported(org="org", existing=("slug",)),
    "brain.organisationgroup": Exported(org="org"),
    # Which connectors' tools it has follows its connections, which stay behind.
    "brain.features": Exported(org="org", omit=("connected",), existing=()),
    # Which worker held it is this installation's; when it did stays, so the sweep takes an unfinished one back.
    "memory.document": Exported(org="org", omit=("claim",)),
    "memory.chunk": Exported(org="org", omit=("next_embedding", "next_embedding_model")),
    "memory.documentblock": Exported(org="document__org"),
    "memory.entity": Exported(org="org"),
    "memory.fact": Exported(org="org", omit=("next_embedding", "next_embedding_model")),
    "memory.value": Exported(org="org"),
    "memory.mention": Exported(org="document__org"),
    "skills.skill": Exported(org="org"),
    "skills.skillversion": Exported(org="skill__org"),
    # A contact's Slack address may be an incoming-webhook URL, which lets anyone holding it post.
    "contacts.contact": Exported(org="org", omit=("slack",)),
    "registers.commitment": Exported(org="org"),
    "registers.commitmentsource": Exported(org="org"),
    "registers.verdict": Exported(
        org="commitment__org",
        json_refs=(
            (
                "found",
                (
                    ("passage_pk", "memory.chunk"),
                    ("document_pk", "memory.document"),
                    ("id", ""),
                    ("passage", ""),
                    ("document", ""),
                    ("memory", ""),
                ),
            ),
        ),
    ),
    "registers.contradiction": Exported(
        org="org", json_refs=(("more", (("fact", "memory.fact"),)),), pair_refs=(("pair", "memory.fact"),)
    ),
    "registers.term": Exported(org="org", json_refs=(("examples", (("passage", "memory.chunk"),)),)),
    # How far each nightly scan read, so the new installation does not read everything again.
    "registers.scan": Exported(
        org="org",
        mark=(
            "last_id",
            "register",
            (("contradictions", "memory.fact"), ("commitments", "memory.chunk"), ("glossary", "memory.chunk")),
        ),
    ),
    "jobs.chat": Exported(org="org"),
    # Its beat entry is this installation's; an imported job waits to be switched on (importing).
    "jobs.job": Exported(
        org="org",
        omit=("next_run_at",),
        imported_as=(("enabled", False), ("paused_reason", "Imported from another installation: switch it on again.")),
    ),
    "jobs.run": Exported(org="chat__org"),
    "jobs.message": Exported(org="chat__org"),
    "brain.auditrecord": Exported(org="org"),
    # Skipped: secrets, grants, call records and this installation's own machinery.
    "brain.apitoken": Skipped("tokens: their hashes open this installation; people make new ones", org="org"),
    "brain.singlesignon": Skipped("single sign-on holds a sealed client secret; set it up again there", org="org"),
    "brain.ssoidentity": Skipped("who signs in as whom at this installation's provider", org="org"),
    "brain.membershipinvitation": Skipped("invitations are links this installation sent", org="org"),
    "brain.accountsettings": Skipped("a person's own choices, not the organisation's"),
    "brain.activity": Skipped("call records of this installation", org="org"),
    "brain.toolcall": Skipped("call records of this installation", org="org"),
    "brain.report": Skipped("assistants' reports, kept here for a limited time", org="org"),
    "brain.spentcode": Skipped("OAuth codes already spent, as hashes"),
    "brain.registrationcount": Skipped("OAuth registrations counted per address"),
    "brain.outboxmessage": Skipped("messages for this installation's workers"),
    "memory.upload": Skipped("files waiting to be read here; what they were read into is exported", org="org"),
    "memory.entitymerge": Skipped("the undo record of a merge, in this installation's row ids", org="org"),
    "memory.searchepoch": Skipped("counters of what search cached here", org="org_id"),
    "contacts.humanrequest": Skipped(
        "questions in flight through this installation's channels; saved answers are documents", org="org"
    ),
    "usage.plan": Skipped("the plans this installation offers"),
    "usage.account": Skipped("the balance on this installation; an import opens an account here", org="org"),
    "usage.month": Skipped("counts billed on this installation", org="org"),
    "usage.miss": Skipped("questions that found nothing, kept here for a limited time", org="org"),
    "connectors.connection": Skipped("connector credentials and webhook secrets; connect again", org="org"),
    "connectors.synceditem": Skipped("a connection's sync state; its documents are exported", org="connection__org"),
    "connectors.sourceaudience": Skipped(
        "a connection's private parts; their categories are exported", org="connection__org"
    ),
    "connectors.recheck": Skipped("a connection's sync state", org="connection__org"),
    "connectors.webhookdelivery": Skipped("a connection's webhook replay guard", org="connection__org"),
    "oauth2_provider.application": Skipped("OAuth clients and their secrets belong to the people who registered them"),
    "oauth2_provider.grant": Skipped("OAuth grants"),
    "oauth2_provider.accesstoken": Skipped("OAuth tokens"),
    "oauth2_provider.refreshtoken": Skipped("OAuth tokens"),
    "oauth2_provider.idtoken": Skipped("OAuth tokens"),
    "oauth2_provider.devicegrant": Skipped("OAuth grants"),
    "auth.permission": Skipped("Django's permissions, the same in every installation"),
    "contenttypes.contenttype": Skipped("Django's table of models, the same in every installation"),
    "sessions.session": Skipped("sessions of people signed in here"),
    "admin.logentry": Skipped("the Django admin's own log, in this installation's ids"),
    "axes.accessfailurelog": Skipped("failed logins, per address"),
    "axes.accessattempt": Skipped("failed logins, per address"),
    "axes.accessattemptexpiration": Skipped("failed logins, per address"),
    "axes.accesslog": Skipped("logins, per address"),
    "django_celery_beat.solarschedule": Skipped("beat's schedules; the apps make their own entries"),
    "django_celery_beat.intervalschedule": Skipped("beat's schedules; the apps make their own entries"),
    "django_celery_beat.clockedschedule": Skipped("beat's schedules; the apps make their own entries"),
    "django_celery_beat.crontabschedule": Skipped("beat's schedules; the apps make their own entries"),
    "django_celery_beat.periodictasks": Skipped("beat's change marker"),
    "django_celery_beat.periodictask": Skipped(
        "beat's entries; an organisation's go with it (brain.portability.leaving)"
    ),
}


def label(model: type[models.Model]) -> str:
    return model._meta.label_lower


def undecided() -> list[str]:
    """The models of the installed apps that no decision names."""
    return sorted(label(model) for model in apps.get_models() if label(model) not in DECISIONS)


def exported() -> list[tuple[type[models.Model], Exported]]:
    """The exported models with their decisions, in import order."""
    return [(apps.get_model(name), d) for name, d in DECISIONS.items() if isinstance(d, Exported)]


def org_rows(model: type[models.Model], decision: Decision, org_id: int) -> models.QuerySet[models.Model]:
    """The rows of ``model`` that belong to the organisation ``org_id`` (none when they belong to none)."""
    if decision.org is None:
        return model._default_manager.none()
    lookup = decision.org if decision.org.endswith(("pk", "_id")) else f"{decision.org}_id"
    rows = model._default_manager.filter(**{lookup: org_id})
    return rows.distinct() if _fans_out(model, decision.org) else rows


def _fans_out(model: type[models.Model], path: str) -> bool:
    """Whether following ``path`` from ``model`` goes through a relation to many rows (a row could
    then be found twice)."""
    for part in path.split("__")[:-1]:
        field = model._meta.get_field(part)
        if field.one_to_many or field.many_to_many:
            return True
        model = field.related_model  # type: ignore[assignment]
    return False
