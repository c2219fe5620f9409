"""Inviting a member by email, instead of an operator making the account, its password and its
membership by hand.

An organisation admin gives an email address and a role. For an address without an account, Brain
makes the account with no usable password (nobody can log in to it yet) and the membership, and
emails a link to a page where the invited person sets their password. The link is built with
Django's password-reset token generator under a salt of its own (an invitation link is no
password-reset link, nor the reverse), so:

- it expires after ``settings.PASSWORD_RESET_TIMEOUT`` seconds (three days unless configured);
- it works once: the token covers the password, so setting one makes every earlier link invalid.

Someone who already has an account is not added: they are emailed an invitation
(``MembershipInvitation``) that they accept or decline on their Invitations page, signed in as
themselves, within the same lifetime. Nothing changes until they accept; a declined or expired one
adds nobody, and another signed-in person cannot answer it (it is not found for them). Inviting
them again while one is open sends it again with a new lifetime and the role now chosen.

An admin may withdraw an open invitation before it is answered (``withdraw_invitation``; the
admin's Invitations list); the person then finds nothing to answer.

Inviting again someone who is a member but has not set a password yet (the email was lost, or the
link expired) sends a new link; their membership stays as it is. When the email cannot be sent,
``Invitation.link`` is the link itself, for the inviting admin to pass on another way.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes, force_str
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.services import add_member
from brain.faces.times import local_time
from brain.infra.mail import mail_is_set_up
from brain.models import Membership, MembershipInvitation, Organisation

logger = logging.getLogger("brain.invitations")


class InvitationTokens(PasswordResetTokenGenerator):
    key_salt = "brain.invitations.InvitationTokens"  # signs links already sent: never changes


invitation_tokens = InvitationTokens()


@dataclass
class Invitation:
    org: Organisation
    user: User
    membership: Membership | None  # None: someone with an account, who joins when they accept ``offer``
    new_account: bool
    offer: MembershipInvitation | None = None
    again: bool = False  # True: a member who had not set a password yet was invited once more
    sent: bool = False  # whether the email went; set after the commit
    link: str | None = None  # set after the commit when the email did not go but a link was due

    @property
    def role(self) -> str:
        held = self.membership or self.offer
        return held.role if held is not None else Membership.MEMBER

    @property
    def target(self) -> str:
        """What the audit record names."""
        if self.membership is not None:
            return f"membership {self.membership.public_id}"
        return f"invitation {self.offer.public_id}" if self.offer is not None else ""


def link_lifetime() -> str:
    """How long an invitation link works, in words (``settings.PASSWORD_RESET_TIMEOUT``)."""
    seconds = int(settings.PASSWORD_RESET_TIMEOUT)
    if seconds % 86_400 == 0:
        days = seconds // 86_400
        return f"{days} day{'s' if days != 1 else ''}"
    hours = max(1, round(seconds / 3600))
    return f"{hours} hour{'s' if hours != 1 else ''}"


@transaction.atomic
def invite_member(*, actor: Actor, email: str, role: str = Membership.MEMBER) -> Invitation:
    """Make ``email`` a member of the actor's organisation and email them; see the module docstring.

    Only an admin of that organisation may invite, and only into it. The email is sent after the
    commit; ``Invitation.sent`` says whether it went (known on return unless the caller's own
    transaction is still open).
    """
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation can invite members to it.")
    email = _checked_email(email)
    if role not in dict(Membership.ROLES):
        raise InvalidArgument(f"Choose a role: {', '.join(dict(Membership.ROLES))}.")
    user = User.objects.filter(email__iexact=email).order_by("pk").first()
    existing = Membership.objects.filter(org=actor.org, user=user).first() if user is not None else None
    if user is not None and existing is None:
        invitation = _offer(actor=actor, user=user, role=role)
    else:
        invitation = _new_member(actor=actor, user=user, email=email, role=role, existing=existing)
    record_audit(
        actor=actor,
        action="member.invited",
        target=invitation.target,
        details={
            "email": email,
            "role": invitation.role,
            "new_account": invitation.new_account,
            "again": invitation.again,
        },
    )
    inviter = actor.user.get_full_name() or actor.user.get_username()
    transaction.on_commit(lambda: _send(invitation, inviter))
    return invitation


def _new_member(*, actor: Actor, user: User | None, email: str, role: str, existing: Membership | None) -> Invitation:
    """The account (when there is none) and the membership, to be taken up through the link."""
    new_account = user is None
    if user is None:
        user = User(username=_free_username(email), email=email)
        user.set_unusable_password()
        user.save()
    elif existing is not None and user.has_usable_password():
        raise InvalidArgument(f"{email} is already a member of {actor.org.name}.")
    # A member who has not set a password yet is sent a new link; their membership and role stay.
    membership = existing or add_member(org=actor.org, user=user, role=role)
    _staff_if_admin(membership)
    return Invitation(
        org=actor.org, user=user, membership=membership, new_account=new_account, again=existing is not None
    )


def _offer(*, actor: Actor, user: User, role: str) -> Invitation:
    """An invitation the person accepts or declines; one open already is renewed."""
    offer = (
        MembershipInvitation.objects.select_for_update()
        .filter(org=actor.org, user=user, answer=MembershipInvitation.OPEN)
        .first()
    )
    again = offer is not None
    offer = offer or MembershipInvitation(org=actor.org, user=user)
    offer.role, offer.invited_by = role, actor.user
    offer.expires_at = timezone.now() + timedelta(seconds=int(settings.PASSWORD_RESET_TIMEOUT))
    offer.save()
    return Invitation(org=actor.org, user=user, membership=None, new_account=False, offer=offer, again=again)


def _staff_if_admin(membership: Membership) -> None:
    user = membership.user
    if membership.role == Membership.ADMIN and not user.is_staff:
        user.is_staff = True  # organisation admins work in the admin, which shows them their organisations only
        user.save(update_fields=["is_staff"])


def list_open_invitations(*, user: User) -> list[MembershipInvitation]:
    """The invitations waiting for ``user``'s answer, newest first (an expired one too, to say so)."""
    found = MembershipInvitation.objects.filter(user=user, answer=MembershipInvitation.OPEN)
    return list(found.select_related("org", "invited_by").order_by("-created_at"))


def has_open_invitation(*, user: User) -> bool:
    return MembershipInvitation.objects.filter(
        user=user, answer=MembershipInvitation.OPEN, expires_at__gt=timezone.now()
    ).exists()


@transaction.atomic
def answer_invitation(*, user: User, invitation_id: str, accept: bool) -> MembershipInvitation:
    """Accept (join with the invited role) or decline an open invitation of ``user``. Anyone
    else's is not found; an answered one cannot be answered again; an expired one cannot be
    accepted."""
    offer = (
        MembershipInvitation.objects.select_for_update()
        .select_related("org")
        .filter(public_id=invitation_id, user=user)
        .first()
    )
    if offer is None:
        raise NotFound("No such invitation for you: it may be meant for another account. Log in as the invited one.")
    org = offer.org
    if offer.answer != MembershipInvitation.OPEN:
        raise InvalidArgument(f"You {offer.answer} this invitation to {org.name} already.")
    if accept and offer.expired:
        raise InvalidArgument(
            f"This invitation to {org.name} expired on {local_time(offer.expires_at, org)}; "
            f"ask an admin of {org.name} to invite you again."
        )
    if accept:
        membership = Membership.objects.filter(org=org, user=user).first()
        _staff_if_admin(membership or add_member(org=org, user=user, role=offer.role))
    offer.answer = MembershipInvitation.ACCEPTED if accept else MembershipInvitation.DECLINED
    offer.answered_at = timezone.now()
    offer.save(update_fields=["answer", "answered_at"])
    record_audit(
        actor=user,
        org=org,
        via="web",
        action=f"member.invitation_{offer.answer}",
        target=f"invitation {offer.public_id}",
        details={"role": offer.role},
    )
    return offer


@transaction.atomic
def withdraw_invitation(*, actor: Actor, invitation_id: int) -> MembershipInvitation:
    """Take back an open invitation of the actor's organisation before it is answered; admins only.
    The row goes, so the person's Invitations page no longer offers it. An answered one cannot be
    withdrawn: remove the membership instead."""
    if not actor.is_admin:
        raise PermissionDenied("Only an admin of the organisation can withdraw its invitations.")
    offer = (
        MembershipInvitation.objects.select_for_update()
        .select_related("user")
        .filter(org=actor.org, pk=invitation_id)
        .first()
    )
    if offer is None:
        raise NotFound("No such invitation in this organisation.")
    if offer.answer != MembershipInvitation.OPEN:
        raise InvalidArgument(
            f"{offer.user.get_username()} {offer.answer} this invitation already; to take access back, "
            "remove their membership."
        )
    record_audit(
        actor=actor,
        action="member.invitation_withdrawn",
        target=f"invitation {offer.public_id}",
        details={"user": offer.user.get_username(), "role": offer.role},
    )
    offer.delete()
    return offer


def invitation_url(user: User) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    path = reverse("accept-invitation", args=[uid, invitation_tokens.make_token(user)])
    return f"{settings.BRAIN_BASE_URL}{path}"


def invited_user(*, uidb64: str, token: str) -> User | None:
    """The person an invitation link is for, or None when the link is forged, expired or used."""
    try:
        pk = int(force_str(urlsafe_base64_decode(uidb64)))
    except (ValueError, TypeError, OverflowError, UnicodeDecodeError):
        return None
    user = User.objects.filter(pk=pk, is_active=True).first()
    if user is None or user.has_usable_password() or not invitation_tokens.check_token(user, token):
        return None
    return user


def _checked_email(email: str) -> str:
    email = email.strip()
    try:
        validate_email(email)
    except ValidationError:
        raise InvalidArgument(f"{email!r} is not an email address.") from None
    return email


def _free_username(email: str) -> str:
    """The email address as the username, or with a number added when someone else has it."""
    base = email.lower()[:140]
    name, n = base, 1
    while User.objects.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _send(invitation: Invitation, inviter: str) -> None:
    user, org = invitation.user, invitation.org
    as_role = "an admin" if invitation.role == Membership.ADMIN else "a member"
    until = local_time(timezone.now() + timedelta(seconds=int(settings.PASSWORD_RESET_TIMEOUT)), org)
    link = None
    if invitation.offer is not None:
        subject = f"You are invited to {org.name} on Brain"
        body = (
            f"{inviter} invited you to join {org.name} on Brain, the company memory, as {as_role}.\n\n"
            "Nothing changes until you answer. Log in as before, then accept or decline it here:\n"
            f"{settings.BRAIN_BASE_URL}{reverse('invitations')}\n\n"
            f"The invitation is open for {link_lifetime()} (until {until})."
        )
    else:
        link = invitation_url(user)
        subject = f"You are invited to {org.name} on Brain"
        body = (
            f"{inviter} invited you to {org.name} on Brain, the company memory, as {as_role}.\n\n"
            f"Set your password here:\n{link}\n\n"
            f"The link works once, for {link_lifetime()} (until {until}). "
            f"Then log in with the username {user.get_username()}.\n\n"
            "If you did not expect this, ignore this email: nobody can use the account until a password is set."
        )
    if not mail_is_set_up():  # nothing to try: the admin passes the link on
        invitation.link = link
        return
    try:
        send_mail(subject, body, None, [user.email])
    except Exception:
        logger.exception("could not email the invitation of %s to organisation %s", user.pk, org.pk)
        invitation.link = link  # the same one-time link, for the inviting admin to pass on
        return
    invitation.sent = True
