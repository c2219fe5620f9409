"""Skill writes: publish a version for review; approve, reject or archive (admins only).

Publishing never changes what assistants get: a new version waits as ``pending`` and the
approved version in use stays in use until an admin approves the new one. Approving makes the
new version current; the one it replaces keeps its ``approved`` status as history but is no
longer current. Rejecting leaves the current version alone. Archiving takes the whole skill out
of use; approving a later version brings it back.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.personal import SHARED, require_may_write
from brain.core.reviews import checked_interval, checked_steward, review_due_on
from brain.infra.mail import mail_is_set_up
from brain.models import Category
from memory.access import readable_category_ids
from skills.models import (
    CONTENT_MAX,
    DEFAULT_VERSION,
    DESCRIPTION_MAX,
    NAME_MAX,
    SLUG_MAX,
    VERSION_MAX,
    Skill,
    SkillVersion,
)

logger = logging.getLogger(__name__)

Status = SkillVersion.Status

# Brain's own bounds on the parts the reference leaves open, so one call cannot store a book in a tag.
MAX_TAGS = 50
TAG_MAX = 100
MAX_ITEMS = 100  # entries in assets, and in scripts
JSON_MAX = 200_000  # characters of assets, scripts or metadata once written as JSON
REASON_MAX = 2_000

SLUG_RE = re.compile(r"[a-z0-9][a-z0-9-]*")


def normalise_slug(slug: str) -> str:
    """The slug Brain stores: lowercased, then checked against the slug rules."""
    value = slug.lower()
    if not value:
        raise InvalidArgument("slug must not be empty.", field="slug")
    if len(value) > SLUG_MAX:
        raise InvalidArgument(
            f"slug has {len(value)} characters; the limit is {SLUG_MAX} and longer slugs are refused.", field="slug"
        )
    if not SLUG_RE.fullmatch(value):
        raise InvalidArgument(
            f"slug {slug!r} is not valid: use only letters, digits and hyphens, starting with a letter or a "
            "digit (for example 'deploy-guide'). Brain lowercases it.",
            field="slug",
        )
    return value


def _check_length(field: str, value: str, limit: int, *, required: bool = False) -> None:
    if required and not value.strip():
        raise InvalidArgument(f"{field} needs some text.", field=field)
    if len(value) > limit:
        raise InvalidArgument(
            f"{field} has {len(value)} characters; the limit is {limit:,} and longer text is refused, not cut.",
            field=field,
        )


def _clean_tags(tags: Iterable[str]) -> list[str]:
    cleaned = list(dict.fromkeys(tag.strip() for tag in tags if tag.strip()))
    if len(cleaned) > MAX_TAGS:
        raise InvalidArgument(f"Send at most {MAX_TAGS} tags.", field="tags")
    for tag in cleaned:
        _check_length("Each tag", tag, TAG_MAX)
    return cleaned


def _clean_objects(field: str, items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    cleaned = [dict(item) for item in items]
    if len(cleaned) > MAX_ITEMS:
        raise InvalidArgument(f"{field} may hold at most {MAX_ITEMS} objects.", field=field)
    _check_json_size(field, cleaned)
    return cleaned


def _check_json_size(field: str, value: object) -> None:
    try:
        size = len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{field} must hold only JSON values.", field=field) from exc
    if size > JSON_MAX:
        raise InvalidArgument(f"{field} is too large: keep it under {JSON_MAX:,} characters of JSON.", field=field)


def resolve_categories(*, actor: Actor, slugs: Sequence[str]) -> list[Category]:
    """The categories to publish into; none given means the organisation's default category.

    A slug unknown to this organisation, and one of its categories the actor may not read, are
    refused alike (as unknown), so the answer never tells that a hidden category exists.
    """
    wanted = list(dict.fromkeys(slug.strip() for slug in slugs if slug.strip())) or [Category.DEFAULT_SLUG]
    readable = set(readable_category_ids(actor=actor))
    found = {
        category.slug: category
        for category in Category.objects.filter(org=actor.org, slug__in=wanted)
        if category.pk in readable
    }
    unknown = [slug for slug in wanted if slug not in found]
    if unknown:
        raise InvalidArgument(
            f"Unknown categor{'y' if len(unknown) == 1 else 'ies'}: {', '.join(unknown)}. "
            "Use categories of this organisation that you can read, or send none for the default category.",
            field="categories",
        )
    return [found[slug] for slug in wanted]


@transaction.atomic
def publish_skill(
    *,
    actor: Actor,
    slug: str,
    name: str,
    content: str,
    description: str = "",
    tags: Iterable[str] = (),
    categories: Sequence[str] = (),
    version: str = DEFAULT_VERSION,
    assets: Iterable[Mapping[str, Any]] = (),
    scripts: Iterable[Mapping[str, Any]] = (),
    metadata: Mapping[str, Any] | None = None,
) -> SkillVersion:
    """Submit a skill version for review. It arrives pending; the version in use stays in use."""
    if not actor.can_write:
        raise PermissionDenied("Publishing a skill needs a token with the write scope.")
    require_may_write(actor, scope=SHARED, what="Publishing a skill (skills are shared)")
    slug = normalise_slug(slug)
    _check_length("name", name, NAME_MAX, required=True)
    _check_length("content", content, CONTENT_MAX, required=True)
    _check_length("description", description, DESCRIPTION_MAX)
    _check_length("version", version, VERSION_MAX, required=True)
    clean_tags = _clean_tags(tags)
    clean_assets = _clean_objects("assets", assets)
    clean_scripts = _clean_objects("scripts", scripts)
    clean_metadata = dict(metadata or {})
    _check_json_size("metadata", clean_metadata)
    chosen = resolve_categories(actor=actor, slugs=categories)

    skill, _ = Skill.objects.get_or_create(org=actor.org, slug=slug)
    submitted = SkillVersion.objects.create(
        skill=skill,
        version=version.strip(),
        name=name.strip(),
        content=content,
        description=description.strip(),
        tags=clean_tags,
        assets=clean_assets,
        scripts=clean_scripts,
        metadata=clean_metadata,
        submitted_by=actor.user,
    )
    submitted.categories.set(chosen)
    return submitted


def _require_admin(actor: Actor) -> None:
    if not actor.is_admin:
        raise PermissionDenied("Only an organisation admin can review skills.")


def _locked_version(actor: Actor, version_id: int) -> SkillVersion:
    """The version with its skill row locked, so two reviewers cannot both change what is current."""
    version = (
        SkillVersion.objects.select_for_update()
        .select_related("skill")
        .filter(skill__org=actor.org, pk=version_id)
        .first()
    )
    if version is None:
        raise NotFound("No such skill version.")
    return version


def _require_pending(version: SkillVersion, verb: str) -> None:
    if version.status != Status.PENDING:
        raise InvalidArgument(f"Only a pending version can be {verb}; this one is {version.status}.")


@transaction.atomic
def approve_version(*, actor: Actor, version_id: int, note: str = "") -> SkillVersion:
    """Make a pending version the one in use. Approving the version already in use changes nothing."""
    _require_admin(actor)
    _check_length("note", note, REASON_MAX)
    version = _locked_version(actor, version_id)
    if version.status == Status.APPROVED and version.is_current:
        return version
    _require_pending(version, "approved")
    _decide(version, actor=actor, status=Status.APPROVED, note=note.strip())
    skill = version.skill
    skill.current_version = version
    skill.archived_at = None
    skill.review_due_on = skill_due_on(skill)  # an approved version is reviewed: its clock starts again
    skill.save(update_fields=["current_version", "archived_at", "review_due_on"])
    return version


@transaction.atomic
def reject_version(*, actor: Actor, version_id: int, reason: str) -> SkillVersion:
    """Turn a pending version down with a reason for its author; the version in use stays."""
    _require_admin(actor)
    _check_length("reason", reason, REASON_MAX, required=True)
    version = _locked_version(actor, version_id)
    _require_pending(version, "rejected")
    _decide(version, actor=actor, status=Status.REJECTED, note=reason.strip())
    return version


def _decide(version: SkillVersion, *, actor: Actor, status: str, note: str) -> None:
    version.status = status
    version.reviewed_by = actor.user
    version.reviewed_at = timezone.now()
    version.review_note = note
    version.save(update_fields=["status", "reviewed_by", "reviewed_at", "review_note"])
    record_audit(actor=actor, action=f"skill.{status}", target=f"skill {version.skill.slug} {version.version}")
    version_id = version.pk
    transaction.on_commit(lambda: notify_submitter(version_id=version_id))


@transaction.atomic
def archive_skill(*, actor: Actor, skill_id: int) -> Skill:
    """Take a skill out of use: its approved and pending versions become archived. Safe to repeat."""
    _require_admin(actor)
    skill = Skill.objects.select_for_update().filter(org=actor.org, pk=skill_id).first()
    if skill is None:
        raise NotFound("No such skill.")
    if skill.archived_at is None:
        skill.versions.filter(status__in=[Status.PENDING, Status.APPROVED]).update(status=Status.ARCHIVED)
        skill.archived_at = timezone.now()
        skill.current_version = None
        skill.save(update_fields=["archived_at", "current_version"])
        record_audit(actor=actor, action="skill.archived", target=f"skill {skill.slug}")
    return skill


def notify_submitter(*, version_id: int) -> bool:
    """Email the author of a version the decision on it. Runs after the commit, outside any transaction.

    A mail server that is down must not undo or hide a decision already saved, so failures are
    logged and reported as False rather than raised.
    """
    version = SkillVersion.objects.select_related("skill__org", "submitted_by").filter(pk=version_id).first()
    if version is None or version.submitted_by is None or not version.submitted_by.email:
        return False
    if version.status not in (Status.APPROVED, Status.REJECTED):
        return False
    if not mail_is_set_up():  # the reviewer was told so on the page (brain.infra.mail.unmailed)
        return False
    subject, body = _decision_message(version)
    try:
        send_mail(subject, body, None, [version.submitted_by.email])
    except Exception:
        logger.exception("could not email the decision on skill version %s", version_id)
        return False
    return True


def _decision_message(version: SkillVersion) -> tuple[str, str]:
    label = f"{version.name} ({version.skill.slug}, version {version.version})"
    org = version.skill.org.name
    if version.status == Status.APPROVED:
        subject = f"Skill approved: {version.name} {version.version}"
        lines = [
            f"Your skill {label} was approved in {org}.",
            "Assistants that can read its categories now get this version.",
        ]
        if version.review_note:
            lines += ["", f"Note from the reviewer: {version.review_note}"]
    else:
        subject = f"Skill not approved: {version.name} {version.version}"
        lines = [
            f"Your skill {label} was rejected in {org}.",
            "",
            f"Reason: {version.review_note}",
            "",
            "The version that was in use before stays in use. Publish a new version to try again.",
        ]
    return subject, "\n".join(lines)


# --- who keeps a skill correct (brain.core.reviews) ----------------------------------------


def may_set_skill_review(actor: Actor, skill: Skill) -> bool:
    """Who may name a skill's steward and interval: an admin, or its steward."""
    return actor.is_admin or skill.steward_id == actor.user.pk


def may_verify_skill(actor: Actor, skill: Skill) -> bool:
    """Who may say a skill is still correct: its steward, or an admin."""
    return actor.is_admin or skill.steward_id == actor.user.pk


def skill_due_on(skill: Skill) -> date | None:
    """The day a skill's review falls due: counted from its last verification or the approval of the
    version in use, whichever came later (else its creation)."""
    approved = skill.current_version.reviewed_at if skill.current_version is not None else None
    anchor = max((moment for moment in (skill.verified_at, approved) if moment is not None), default=None)
    return review_due_on(
        every_days=skill.review_every_days, verified_at=anchor, recorded_at=skill.created_at, org=skill.org
    )


def _locked_skill(actor: Actor, skill_id: int) -> Skill:
    skill = (
        Skill.objects.select_for_update(of=("self",))
        .select_related("org", "current_version")
        .filter(org=actor.org, pk=skill_id)
        .first()
    )
    if skill is None:
        raise NotFound("No such skill.")
    return skill


@transaction.atomic
def set_skill_review(
    *, actor: Actor, skill_id: int, steward_id: int | str | None, review_every_days: int | str | None
) -> Skill:
    """Name who looks after a skill and how often it is reviewed (blank for nobody, never)."""
    skill = _locked_skill(actor, skill_id)
    if not may_set_skill_review(actor, skill):
        raise PermissionDenied("Only an admin or the skill's steward may change who looks after it.")
    before = {"steward": skill.steward_id, "review_every_days": skill.review_every_days}
    skill.steward = checked_steward(org=actor.org, user_id=steward_id)
    skill.review_every_days = checked_interval(review_every_days)
    skill.review_due_on = skill_due_on(skill)
    skill.save(update_fields=["steward", "review_every_days", "review_due_on"])
    after = {"steward": skill.steward_id, "review_every_days": skill.review_every_days}
    if after != before:
        record_audit(
            actor=actor,
            action="skill.review_changed",
            target=f"skill {skill.slug}",
            details={"before": before, "after": after, "due_on": str(skill.review_due_on or "")},
        )
    return skill


@transaction.atomic
def verify_skill(*, actor: Actor, skill_id: int) -> Skill:
    """Its steward (or an admin) says the skill is still correct: its next review is due one interval from now."""
    skill = _locked_skill(actor, skill_id)
    if not may_verify_skill(actor, skill):
        raise PermissionDenied("Only its steward or an admin may say this skill is still correct.")
    was_due = skill.review_due_on
    skill.verified_at = timezone.now()
    skill.review_due_on = skill_due_on(skill)
    skill.save(update_fields=["verified_at", "review_due_on"])
    record_audit(
        actor=actor,
        action="skill.verified",
        target=f"skill {skill.slug}",
        details={"was_due_on": str(was_due or ""), "due_on": str(skill.review_due_on or "")},
    )
    return skill
