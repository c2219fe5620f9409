"""Core services: organisations, members, tokens, activities, reports and call records."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import router, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

import brain
from brain.core.actors import Actor
from brain.core.audit import record_audit, shown
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.infra.hooks import Seam
from brain.infra.ids import is_random_id
from brain.infra.postgres import prepared_cursor
from brain.infra.prepared import Prepared
from brain.models import (
    Activity,
    ApiToken,
    Category,
    Features,
    Membership,
    Organisation,
    Report,
    ToolCall,
)

TOKEN_PREFIX = "brn_"  # noqa: S105 (a public marker at the start of every token, not a secret)


def hash_token(plaintext: str) -> str:
    # Tokens carry 256 bits of randomness, so an unsalted SHA-256 is enough to store them.
    return hashlib.sha256(plaintext.encode()).hexdigest()


# What else a new organisation needs, from the apps above the core: its account on a plan (usage).
# Called inside create_organisation's transaction with the organisation and the plan asked for.
ORGANISATION_MADE: Seam[Callable[[Organisation, str | None], None]] = Seam(
    "organisation made", "called with a new organisation and the plan asked for; raises to refuse it"
)
# Questions the search tools found no evidence for, kept by the usage app for its overview page.
# Called with keyword arguments actor, tool and question; what is plugged never fails the call.
MISSED: Seam[Callable[..., None]] = Seam("missed question", "called with a question that found no evidence")


def record_miss(*, actor: Actor, tool: str, question: str) -> None:
    """Note that ``question``, asked of ``tool``, found no evidence."""
    for keep in MISSED:
        keep(actor=actor, tool=tool, question=question)


@transaction.atomic
def create_organisation(
    *, slug: str, name: str, language: str = "en", time_zone: str = "UTC", plan: str | None = None
) -> Organisation:
    """A new organisation with its default category, its switches and an account on ``plan``
    (``BRAIN_DEFAULT_PLAN`` when not given). Every way of making one comes here (the admin too):
    without the default category nothing can be saved to it."""
    if Organisation.objects.filter(slug=slug).exists():
        raise InvalidArgument(f"An organisation with the slug {slug!r} already exists.")
    org = Organisation.objects.create(slug=slug, name=name, language=language, time_zone=time_zone)
    Category.objects.create(org=org, slug=Category.DEFAULT_SLUG, name="General")
    Features.objects.create(org=org)
    for made in ORGANISATION_MADE:
        made(org, plan)  # may refuse (an unknown plan): the whole creation is then undone
    return org


def add_member(*, org: Organisation, user: User, role: str = Membership.MEMBER) -> Membership:
    membership, created = Membership.objects.get_or_create(org=org, user=user, defaults={"role": role})
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    plaintext: str


@transaction.atomic
def create_token(
    *,
    org: Organisation,
    user: User,
    scopes: list[str],
    name: str = "",
    expires_in_days: int | None = None,
    via: str = "command",
) -> IssuedToken:
    """Issue a token; the plaintext exists only in the return value.

    ``via`` says who asked: ``web`` is the user on the Connect page; ``command`` (the default, for
    manage.py and bootstrap) is an operator issuing it for them.
    """
    wanted = sorted(set(scopes))
    unknown = [s for s in wanted if s not in ApiToken.SCOPES]
    if unknown or not wanted:
        raise InvalidArgument(
            f"Scopes must be 'read', 'read,write' or 'read,write,personal'; got {','.join(scopes) or 'nothing'}."
        )
    if "personal" in wanted:
        wanted = sorted({*wanted, "write"})  # personal is a limit on writing, so it implies write
    if "write" in wanted and "read" not in wanted:
        wanted = sorted({*wanted, "read"})
    if not Membership.objects.filter(org=org, user=user).exists():
        raise NotFound(f"{user.get_username()} is not a member of {org.slug}.")
    if expires_in_days is not None and not 1 <= expires_in_days <= 3650:
        raise InvalidArgument("Expiry must be between 1 and 3650 days.")
    prefix = secrets.token_hex(4)
    plaintext = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        org=org,
        user=user,
        name=name[:100],
        prefix=prefix,
        hashed=hash_token(plaintext),
        scopes=wanted,
        expires_at=timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None,
    )
    record_audit(
        actor=user,
        org=org,
        via=via,
        action="token.created",
        target=f"token brn_{token.prefix}",
        details={"user": user.get_username(), "scopes": wanted, "expires_at": shown(token.expires_at)},
    )
    return IssuedToken(token=token, plaintext=plaintext)


def authenticate_token(plaintext: str) -> ApiToken | None:
    """The active token behind a bearer value, or None. Records the use at most once a minute."""
    if not plaintext.startswith(TOKEN_PREFIX) or len(plaintext) > 200:
        return None
    return mark_used(TOKEN_BY_HASH.first(hashed=hash_token(plaintext)))


def live_tokens() -> QuerySet[ApiToken]:
    """Unrevoked tokens of active users, with what every call needs loaded in the same statement:
    the account and its plan for metering (usage.metering), the feature switches, and the user's
    role and profile (actor_for_token, get_profile). Connected apps (brain.oauth) are found
    through it too."""
    membership = Membership.objects.filter(org=OuterRef("org"), user=OuterRef("user"))
    return (
        ApiToken.objects.select_related("org", "org__account__plan", "org__features", "user")
        .annotate(
            member_role=Subquery(membership.values("role")[:1]),
            member_profile=Subquery(membership.values("public_id")[:1]),
        )
        .filter(revoked_at__isnull=True, user__is_active=True)
    )


# Every call with a brn_ token runs it: composed once (brain.infra.prepared).
TOKEN_BY_HASH = Prepared(lambda hashed: live_tokens().filter(hashed=hashed), hashed=str)


def mark_used(token: ApiToken | None) -> ApiToken | None:
    """The token if it is still active, its use recorded at most once a minute; else None."""
    if token is None or not token.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > timedelta(minutes=1):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def actor_for_token(token: ApiToken, *, via: str, client: dict[str, str] | None = None) -> Actor:
    """The caller a token stands for, while its user is still a member (``authenticate_token``
    loads the role with the token; a token loaded otherwise has it looked up)."""
    if hasattr(token, "member_role"):
        role = token.member_role
    else:
        role = Membership.objects.filter(org=token.org, user=token.user).values_list("role", flat=True).first()
    if role is None:
        raise PermissionDenied("This token's user is no longer a member of the organisation.")
    return Actor(
        org=token.org,
        user=token.user,
        scopes=frozenset(token.scopes),
        via=via,
        token=token,
        role=role,
        client=client or {},
    )


def actor_for_user(*, org: Organisation, user: User, via: str) -> Actor:
    membership = Membership.objects.filter(org=org, user=user).first()
    if membership is None:
        raise NotFound("No such organisation.")
    return Actor(org=org, user=user, scopes=frozenset({"read", "write"}), via=via, role=membership.role)


@transaction.atomic
def revoke_token(*, actor: Actor, token_id: int) -> ApiToken:
    """Revoke a token of one's own; an organisation admin may revoke any token of the organisation."""
    tokens = ApiToken.objects.filter(org=actor.org)
    if not actor.is_admin:
        tokens = tokens.filter(user=actor.user)
    token = tokens.filter(pk=token_id).first()
    if token is None:
        raise NotFound("No such token.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        record_audit(
            actor=actor,
            action="token.revoked",
            target=f"token brn_{token.prefix}",
            details={"user": token.user.get_username()},
        )
    return token


def start_activity(
    *, actor: Actor, label: str = "", conversation_id: str = "", user_question_hash: str = ""
) -> Activity:
    return Activity.objects.create(
        org=actor.org,
        user=actor.user,
        token=actor.token,
        label=label,
        conversation_id=conversation_id,
        user_question_hash=user_question_hash,
    )


def resolve_activity(*, actor: Actor, activity_id: str | None) -> Activity | None:
    """The caller's own activity with that id, or None: another member's is treated as unknown, and
    a value that cannot be an activity id is not looked up."""
    if not is_random_id(activity_id, "act"):
        return None
    return Activity.objects.filter(org=actor.org, user=actor.user, public_id=activity_id).first()


def _report_base(actor: Actor, activity_id: str | None) -> dict[str, Any]:
    return {
        "org": actor.org,
        "user": actor.user,
        "token": actor.token,
        "activity": resolve_activity(actor=actor, activity_id=activity_id),
        "activity_ref": (activity_id or "")[:80],
        "client_name": actor.client.get("name", "")[:200],
        "client_version": actor.client.get("version", "")[:100],
        "session_ref": actor.client.get("session", "")[:200],
        "user_agent": actor.client.get("user_agent", "")[:300],
        "release": brain.__version__,
    }


def report_issue(
    *,
    actor: Actor,
    category: str,
    observed: str,
    expected: str,
    activity_id: str | None = None,
    tool_name: str = "",
    user_request: str = "",
    error_message: str = "",
) -> Report:
    if category not in Report.CATEGORIES:
        raise InvalidArgument(f"category must be one of {', '.join(Report.CATEGORIES)}.")
    return Report.objects.create(
        kind=Report.ISSUE,
        category=category,
        observed=observed,
        expected=expected,
        tool_name=tool_name[:80],
        user_request=user_request,
        error_message=error_message,
        **_report_base(actor, activity_id),
    )


def send_feedback(
    *,
    actor: Actor,
    summary: str,
    origin: str,
    context: str = "",
    blocked: bool = False,
    activity_id: str | None = None,
) -> Report:
    if origin not in Report.ORIGINS:
        raise InvalidArgument("origin must be 'user' (the person's idea) or 'agent' (the assistant's).")
    return Report.objects.create(
        kind=Report.FEEDBACK,
        summary=summary,
        origin=origin,
        context=context,
        blocked=blocked,
        **_report_base(actor, activity_id),
    )


def purge_expired_reports(*, now: datetime | None = None) -> int:
    deleted, _ = Report.objects.filter(expires_at__lte=now or timezone.now()).delete()
    return deleted


def record_tool_call(
    *,
    actor: Actor,
    tool: str,
    duration_ms: float,
    outcome: str,
    error_code: str = "",
    activity_id: str | None = None,
    credits: int = 0,
) -> ToolCall:
    """Write one call record, the caller's activity with that id (``resolve_activity``) looked up
    in the same statement: one round trip on every call, composed once."""
    activity = activity_id if is_random_id(activity_id, "act") else None
    call = ToolCall(
        org=actor.org,
        user=actor.user,
        token=actor.token,
        tool=tool,
        via=actor.via,
        started_at=timezone.now(),
        duration_ms=duration_ms,
        outcome=outcome,
        error_code=error_code[:64],
        credits=credits,
    )
    values = [getattr(call, column) for column in _RECORD_COLUMNS]
    with prepared_cursor(router.db_for_write(ToolCall)) as cursor:
        cursor.execute(_RECORD_SQL, [*values, actor.org.pk, actor.user.pk, activity])
        call.pk, call.activity_id = cursor.fetchone()
    call._state.adding, call._state.db = False, cursor.db.alias
    return call


_RECORD_COLUMNS = ("org_id", "user_id", "token_id", "tool", "via", "started_at", "duration_ms", "outcome",
                   "error_code", "credits")  # fmt: skip
_RECORD_SQL = (
    f"INSERT INTO {ToolCall._meta.db_table} ({', '.join(_RECORD_COLUMNS)}, activity_id) "  # noqa: S608 (names, not values)
    f"VALUES ({', '.join(['%s'] * len(_RECORD_COLUMNS))}, "
    f"(SELECT id FROM {Activity._meta.db_table} WHERE org_id = %s AND user_id = %s AND public_id = %s)) "
    "RETURNING id, activity_id"
)


def mark_memory_built(*, org: Organisation) -> Organisation:
    """The memory is ready to answer: init stops showing the collecting notice."""
    if org.memory_built_at is None:
        org.memory_built_at = timezone.now()
        org.save(update_fields=["memory_built_at"])
    return org


def set_connected_tools(*, org: Organisation, markers: set[str]) -> None:
    """What the organisation's connections add to its tools (``Features.connected``): called by the
    connectors whenever a connection is added or removed, or an ACTION tool granted or withdrawn."""
    features, _ = Features.objects.get_or_create(org=org)
    if set(features.connected) != markers:
        features.connected = sorted(markers)
        features.save(update_fields=["connected"])


@dataclass(frozen=True)
class Bootstrap:
    org: Organisation
    admin: User
    admin_password: str | None  # set only when the admin was created now
    token: IssuedToken | None  # set only when the first token was issued now


@transaction.atomic
def bootstrap(*, org_slug: str, org_name: str, admin_username: str, admin_email: str) -> Bootstrap:
    """Make sure a first organisation, its admin and a read-write token exist. Safe to run again."""
    # A new install never surprises its owner with a limit: the first organisation is unlimited.
    org = Organisation.objects.filter(slug=org_slug).first() or create_organisation(
        slug=org_slug, name=org_name, plan="unlimited"
    )
    password: str | None = None
    admin = User.objects.filter(username=admin_username).first()
    if admin is None:
        password = secrets.token_urlsafe(12)
        admin = User.objects.create_superuser(username=admin_username, email=admin_email, password=password)
    add_member(org=org, user=admin, role=Membership.ADMIN)
    issued = None
    if not ApiToken.objects.filter(org=org, user=admin).exists():
        issued = create_token(org=org, user=admin, scopes=["read", "write"], name="first token")
    return Bootstrap(org=org, admin=admin, admin_password=password, token=issued)
