"""Core reads, always scoped to the actor."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from brain.core.actors import Actor
from brain.core.errors import NotFound
from brain.models import CONNECTED_APP_PREFIX, ApiToken, Features, Membership, Organisation


@dataclass(frozen=True)
class Profile:
    profile_id: str
    email: str
    name: str
    organisation: str


def get_profile(*, actor: Actor) -> Profile:
    public_id = getattr(actor.token, "member_profile", None)  # loaded with a bearer token
    if public_id is None:
        public_id = (
            Membership.objects.filter(org=actor.org, user=actor.user).values_list("public_id", flat=True).first()
        )
    if public_id is None:
        raise NotFound("No profile for this caller.")
    return Profile(
        profile_id=f"prf_{public_id.hex}",
        email=actor.user.email,
        name=actor.user.get_full_name() or actor.user.get_username(),
        organisation=actor.org.name,
    )


def list_user_tokens(*, user: User) -> QuerySet[ApiToken]:
    """A person's brn_ tokens; connected apps have a page of their own (brain.oauth)."""
    return (
        ApiToken.objects.filter(user=user)
        .exclude(prefix=CONNECTED_APP_PREFIX)
        .select_related("org")
        .order_by("-created_at")
    )


def administers_any(*, user: User | AnonymousUser) -> bool:
    """Whether ``user`` is an operator or an admin of some organisation: who sees the overview, the
    admin's work waiting for people, and lands on the overview from ``/``."""
    if not user.is_authenticated:
        return False
    return bool(user.is_superuser) or Membership.objects.filter(user=user, role=Membership.ADMIN).exists()


def list_administered_organisations(*, user: User) -> QuerySet[Organisation]:
    """The organisations ``user`` administers: every one for an operator, else those where their
    membership has the admin role."""
    orgs = Organisation.objects.order_by("name")
    if user.is_superuser:
        return orgs
    return orgs.filter(memberships__user=user, memberships__role=Membership.ADMIN)


def list_user_organisations(*, user: User) -> QuerySet[Organisation]:
    return Organisation.objects.filter(memberships__user=user).order_by("name")


def enabled_features(*, actor: Actor) -> set[str]:
    """The features on for the actor's organisation, as read with the actor (once a request)."""
    features = getattr(actor.org, "features", None)
    return features.enabled() if features is not None else set()


def features_on(org: Organisation | int) -> set[str]:
    """The features on for an organisation now, read fresh: its switches (``Features.SWITCHES``)
    and what its connections add (``connector:<kind>``, ``grant:<tool>``)."""
    features = Features.objects.filter(org_id=getattr(org, "pk", org)).first()
    return features.enabled() if features is not None else set()


def feature_on(org: Organisation | int, name: str) -> bool:
    """Whether one feature is on for an organisation now. Every "is this switched on" outside a
    request's actor asks here."""
    return name in features_on(org)


def orgs_with(name: str) -> QuerySet[Features, Any]:
    """The ids (``org_id``) of the organisations where the switch ``name`` is on, as a subquery."""
    if name not in Features.SWITCHES:
        raise ValueError(f"{name!r} is not a feature switch")
    return Features.objects.filter(**{name: True}).values("org_id")
