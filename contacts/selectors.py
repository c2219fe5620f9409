"""Reading requests to people for a signed-in user, with the access rule applied here once.

The answer link of a request lets whoever holds it answer in the contact's name, so it is given
only to the asker and to admins of the request's organisation (an operator administers every
one); to anyone else the request is not found. The questions put to someone are theirs to answer
when they are the contact's linked user and a member of the organisation.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet

from brain.core.errors import NotFound
from brain.core.selectors import list_administered_organisations
from brain.infra.ids import is_random_id
from brain.models import Membership
from contacts.models import HumanRequest
from contacts.undelivered import Undelivered, undelivered

Status = HumanRequest.Status
UNANSWERED = [Status.QUEUED, Status.SENDING, Status.SENT, Status.DELIVERED, Status.NOT_SENT, Status.FAILED]


def may_pass_on(*, user: User, request: HumanRequest) -> bool:
    """Whether ``user`` may be given the request's answer link: its asker or an admin of its organisation."""
    if request.requester_id == user.pk:
        return True
    return list_administered_organisations(user=user).filter(pk=request.org_id).exists()


def get_undelivered(*, user: User, request: HumanRequest) -> Undelivered | None:
    """The words and the link to pass on, for the asker and the organisation's admins only."""
    return undelivered(request) if may_pass_on(user=user, request=request) else None


def list_questions_for(*, user: User) -> QuerySet[HumanRequest]:
    """The questions waiting for ``user``'s answer: put to a contact linked to them, in an
    organisation they are a member of, not answered yet; oldest first."""
    orgs = Membership.objects.filter(user=user).values("org_id")
    found = HumanRequest.objects.filter(contact__user=user, org_id__in=orgs, status__in=UNANSWERED)
    return found.select_related("contact", "requester", "org").order_by("created_at")


def get_question_for(*, user: User, public_id: str) -> HumanRequest:
    """One question ``user`` may answer signed in (see ``list_questions_for``), answered or not;
    anyone else's is not found."""
    orgs = Membership.objects.filter(user=user).values("org_id")
    found = HumanRequest.objects.filter(contact__user=user, org_id__in=orgs, public_id=public_id)
    row = found.select_related("contact", "requester", "org").first() if is_random_id(public_id, "req") else None
    if row is None:
        raise NotFound("No such question for you.")
    return row
