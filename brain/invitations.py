"""Inviting a member by email, instead of an operator making the account, its password and its
membership by hand.

An organisation admin gives an email address and a role. Brain makes the account with no usable
password (nobody can log in to it yet) and the membership, and emails a link to a page where the
invited person sets their password. The link is built with Django's password-reset token generator
under a salt of its own (an invitation link is no password-reset link, nor the reverse), so:

- it expires after ``settings.PASSWORD_RESET_TIMEOUT`` seconds (three days unless configured);
- it works once: the token covers the password, so setting one makes every earlier link invalid.

Someone who already has an account is added to the organisation and told by email; they keep
their password and get no link.

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

from brain.actors import Actor
from brain.audit import record_audit
from brain.errors import InvalidArgument, PermissionDenied
from brain.models import Membership
from brain.services import add_member
from brain.times import local_time

logger = logging.getLogger("brain.invitations")


class InvitationTokens(PasswordResetTokenGenerator):
    key_salt = "brain.invitations.InvitationTokens"


invitation_tokens = InvitationTokens()


@dataclass
class Invitation:
    membership: Membership
    new_account: bool  # False: the person had an account already, and gets a notice without a link
    again: bool = False  # True: a member who had not set a password yet was invited once more
    sent: bool = False  # whether the email went; set after the commit
    link: str | None = None  # set after the commit when the email did not go but a link was due


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
    new_account = user is None
    existing = Membership.objects.filter(org=actor.org, user=user).first() if user is not None else None
    if user is None:
        user = User(username=_free_username(email), email=email)
        user.set_unusable_password()
        user.save()
    elif existing is not None and user.has_usable_password():
        raise InvalidArgument(f"{email} is already a member of {actor.org.name}.")
    # A member who has not set a password yet is sent a new link; their membership and role stay.
    membership = existing or add_member(org=actor.org, user=user, role=role)
    if membership.role == Membership.ADMIN and not user.is_staff:
        user.is_staff = True  # organisation admins work in the admin, which shows them their organisations only
        user.save(update_fields=["is_staff"])
    record_audit(
        actor=actor,
        action="member.invited",
        target=f"membership {membership.public_id}",
        details={"email": email, "role": membership.role, "new_account": new_account, "again": existing is not None},
    )
    invitation = Invitation(membership=membership, new_account=new_account, again=existing is not None)
    inviter = actor.user.get_full_name() or actor.user.get_username()
    transaction.on_commit(lambda: _send(invitation, inviter))
    return invitation


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
    membership = invitation.membership
    user, org = membership.user, membership.org
    as_role = "an admin" if membership.role == Membership.ADMIN else "a member"
    link = None if user.has_usable_password() else invitation_url(user)
    if link is None:
        subject = f"You were added to {org.name} on Brain"
        body = (
            f"{inviter} added you to {org.name} on Brain, the company memory, as {as_role}.\n\n"
            f"Log in as before: {settings.BRAIN_BASE_URL}/login/"
        )
    else:
        until = local_time(timezone.now() + timedelta(seconds=int(settings.PASSWORD_RESET_TIMEOUT)), org)
        subject = f"You are invited to {org.name} on Brain"
        body = (
            f"{inviter} invited you to {org.name} on Brain, the company memory, as {as_role}.\n\n"
            f"Set your password here:\n{link}\n\n"
            f"The link works once, for {link_lifetime()} (until {until}). "
            f"Then log in with the username {user.get_username()}.\n\n"
            "If you did not expect this, ignore this email: nobody can use the account until a password is set."
        )
    try:
        send_mail(subject, body, None, [user.email])
    except Exception:
        logger.exception("could not email the invitation of membership %s", membership.pk)
        invitation.link = link  # the same one-time link, for the inviting admin to pass on
        return
    invitation.sent = True
