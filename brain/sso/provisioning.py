"""Who an organisation's provider may sign in, and what the claims make of them.

A provider is the organisation's own: its admins configure it, and a provider they run can say
anything. So it signs people into its organisation only, and only people who belong to no other
organisation and are not superusers: what it vouches for can never open another organisation's
data or the operators' admin. Within that, the organisation chooses who joins (an allowed
e-mail domain, or an invitation) and the groups claim sets the role and the groups it maps, at
every sign-in. Every change is audited in the sign-in's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import connection, transaction
from django.utils import timezone

from brain.core.audit import record_audit
from brain.core.errors import DomainError
from brain.core.services import add_member
from brain.models import Membership, SingleSignOn, SsoIdentity

VIA = "sso"


class SignInRefused(DomainError):
    code, status = "sso_refused", 403


@dataclass(frozen=True)
class Claims:
    """What Brain reads from a checked ID token and the provider's user info."""

    subject: str
    email: str
    name: str
    groups: frozenset[str]

    @property
    def domain(self) -> str:
        return self.email.rpartition("@")[2].lower()


def read_claims(raw: dict[str, Any], *, groups_claim: str) -> Claims:
    """The claims Brain needs, refusing a sign-in without a subject or a verified e-mail address."""
    subject, email = raw.get("sub"), raw.get("email")
    if not isinstance(subject, str) or not subject:
        raise SignInRefused("The provider did not say who signed in (no 'sub' claim).")
    if not isinstance(email, str) or "@" not in email:
        raise SignInRefused(
            "The provider sent no e-mail address; ask your admin to release the 'email' claim to Brain."
        )
    if raw.get("email_verified") is False:
        raise SignInRefused(f"The provider has not verified {email}; verify it there and sign in again.")
    groups = raw.get(groups_claim) or []
    if isinstance(groups, str):
        groups = [groups]
    name = raw.get("name")
    return Claims(
        subject=subject,
        email=email.strip(),
        name=name if isinstance(name, str) else "",
        groups=frozenset(str(group) for group in groups if isinstance(group, str | int)),
    )


def role_for(sso: SingleSignOn, groups: frozenset[str]) -> str | None:
    """The role the claims give, or None when the organisation sets roles in Brain only."""
    if not sso.role_map:
        return None
    roles = {sso.role_map[group] for group in groups if group in sso.role_map}
    return Membership.ADMIN if Membership.ADMIN in roles else Membership.MEMBER


@transaction.atomic
def sign_in_with_sso(*, sso: SingleSignOn, issuer: str, claims: Claims) -> User:
    """The account a checked sign-in at ``sso``'s provider is for, made a member (first sign-in),
    given the role and groups its claims map to, and audited; refused in words otherwise."""
    org = sso.org
    if sso.allowed_domains and claims.domain not in {domain.lower() for domain in sso.allowed_domains}:
        raise SignInRefused(f"{org.name} does not let {claims.domain} addresses sign in with {sso.label}.")
    with connection.cursor() as cursor:  # two first sign-ins of one person at once make one account
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"sso:{org.pk}:{claims.email.lower()}"])
    identity = (
        SsoIdentity.objects.select_for_update()
        .select_related("user")
        .filter(org=org, issuer=issuer, subject=claims.subject)
        .first()
    )
    user = identity.user if identity is not None else _user_by_email(claims.email)
    if user is not None:
        _require_theirs(sso, user)
    membership = Membership.objects.filter(org=org, user=user).first() if user is not None else None
    role = role_for(sso, claims.groups)
    if membership is None:
        membership = _join(sso, user, claims, role, issuer)
    elif role is not None and membership.role != role:
        record_audit(
            actor=membership.user,
            org=org,
            via=VIA,
            action="member.role_changed",
            target=membership.user.get_username(),
            details={"old": membership.role, "new": role, "issuer": issuer},
        )
        membership.role = role
        membership.save(update_fields=["role"])
    user = membership.user
    _staff_as_role(user, membership.role)
    _set_groups(sso, user, claims.groups, issuer)
    _link(sso, identity, user, issuer, claims.subject)
    record_audit(
        actor=user,
        org=org,
        via=VIA,
        action="user.signed_in",
        target=f"user {user.get_username()}",  # as the login pages write it (brain.core.sign_ins)
        details={"method": "sso", "issuer": issuer},
    )
    return user


def _join(sso: SingleSignOn, user: User | None, claims: Claims, role: str | None, issuer: str) -> Membership:
    """First sign-in: the membership (and the account, for someone new), when the organisation
    lets people of this domain join by themselves."""
    if sso.provision != SingleSignOn.DOMAIN or not sso.allowed_domains:
        raise SignInRefused(
            f"{claims.email} has not been invited to {sso.org.name}; ask one of its admins to invite you."
        )
    user = user or _new_user(claims)
    membership = add_member(org=sso.org, user=user, role=role or Membership.MEMBER)
    record_audit(
        actor=user,
        org=sso.org,
        via=VIA,
        action="member.added",
        target=user.get_username(),
        details={"role": membership.role, "issuer": issuer},
    )
    return membership


def _user_by_email(email: str) -> User | None:
    found = list(User.objects.filter(email__iexact=email)[:2])
    if len(found) > 1:
        raise SignInRefused(f"More than one account has the address {email}; an operator must tell them apart.")
    return found[0] if found else None


def _require_theirs(sso: SingleSignOn, user: User) -> None:
    """A provider signs in only people its organisation alone answers for."""
    if not user.is_active:
        raise SignInRefused("This account is switched off; ask an admin of your organisation.")
    if user.is_superuser:
        raise SignInRefused("Operators sign in with their password, not through an organisation's provider.")
    if Membership.objects.filter(user=user).exclude(org=sso.org).exists():
        raise SignInRefused(
            f"This account belongs to other organisations besides {sso.org.name}; sign in with its password."
        )


def _new_user(claims: Claims) -> User:
    base = claims.email.lower()[:140]
    username, n = base, 1
    while User.objects.filter(username__iexact=username).exists():
        n += 1
        username = f"{base}-{n}"
    first, _, last = claims.name.partition(" ")
    user = User(username=username, email=claims.email, first_name=first[:150], last_name=last[:150])
    user.set_unusable_password()
    user.save()
    return user


def _staff_as_role(user: User, role: str) -> None:
    staff = role == Membership.ADMIN  # organisation admins work in the admin, limited to their organisation
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])


def _set_groups(sso: SingleSignOn, user: User, groups: frozenset[str], issuer: str) -> None:
    """Make the user's membership of the groups the map names exactly what the claims say; groups
    the map does not name are left as Brain's admins set them."""
    if not sso.group_map:
        return
    managed = {
        group.name: group
        for group in Group.objects.filter(name__in=set(sso.group_map.values()), organisation_link__org=sso.org)
    }
    wanted = {sso.group_map[claim] for claim in groups if claim in sso.group_map} & managed.keys()
    held = set(user.groups.filter(pk__in=[group.pk for group in managed.values()]).values_list("name", flat=True))
    added, removed = sorted(wanted - held), sorted(held - wanted)
    if not added and not removed:
        return
    user.groups.add(*(managed[name] for name in added))
    user.groups.remove(*(managed[name] for name in removed))
    record_audit(
        actor=user,
        org=sso.org,
        via=VIA,
        action="member.groups_changed",
        target=user.get_username(),
        details={"added": added, "removed": removed, "issuer": issuer},
    )


def _link(sso: SingleSignOn, identity: SsoIdentity | None, user: User, issuer: str, subject: str) -> None:
    now = timezone.now()
    if identity is not None:
        identity.last_sign_in_at = now
        identity.save(update_fields=["last_sign_in_at"])
        return
    # One identity per member: a new provider (or a new account there) takes the link over.
    SsoIdentity.objects.update_or_create(
        org=sso.org, user=user, defaults={"issuer": issuer, "subject": subject, "last_sign_in_at": now}
    )
