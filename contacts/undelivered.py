"""A request its person may not have received, in words, with the answer link to pass on.

When no mail server is set up, or sending failed, the asker and the organisation's admins get the
same signed link the message would carry, to send on another way (chat, another mail), and words
that say what happened and what to do. The provider's raw error (``last_error``) stays in the logs
and in the admin's detail of the request; these words never quote it.

Who may be given the link is decided by ``contacts.selectors.get_undelivered``, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from brain.faces.times import local_time
from contacts.models import HumanRequest
from contacts.services import INTERRUPTED, MAX_RETRIES, NO_WRITTEN_LINK, answer_link_expires, answer_url

Status = HumanRequest.Status
# Who Brain tried to reach, by channel: the words of "Brain could not reach ...".
SERVICE = {"email": "the mail server", "slack": "Slack", "call": "the phone service", "whatsapp": "WhatsApp"}
PASS_ON = "copy this link and pass it on"  # noqa: S105 (words, not a secret)


@dataclass(frozen=True)
class Undelivered:
    words: str  # what happened and what to do, one or two sentences
    short: str  # the same for a list's cell
    link: str  # the answer link; "" once it expired
    expires: datetime


def undelivered(request: HumanRequest) -> Undelivered | None:
    """What to tell the asker about a request its person may not have received; None when it went
    (or is going) out normally, or was answered."""
    found = _what_happened(request)
    if found is None:
        return None
    what, meanwhile, short = found
    expires = answer_link_expires(request)
    if expires <= timezone.now():
        when = local_time(expires, request.org)
        words = f"{what}, and its answer link expired on {when}: ask the question again."
        return Undelivered(words=words, short=short, link="", expires=expires)
    words = f"{what}: {'meanwhile ' if meanwhile else ''}{PASS_ON}."
    return Undelivered(words=words, short=short, link=answer_url(request), expires=expires)


def _what_happened(request: HumanRequest) -> tuple[str, bool, str] | None:
    """What happened, whether Brain is still trying (the link is "meanwhile"), and the short form."""
    service = SERVICE.get(request.channel, request.channel_label)
    if request.status == Status.SENT and request.last_error == NO_WRITTEN_LINK:
        what = "The call went through, but Brain could not send the answer link in writing"
        return what, False, "Called; the answer link was not sent"
    if request.status == Status.NOT_SENT:
        return "No mail server is set up", False, "Not sent: no mail server is set up"
    if request.status == Status.QUEUED and request.last_error == INTERRUPTED:
        return "Sending was interrupted and Brain is sending it again", True, "Interrupted; sending again"
    if request.status == Status.QUEUED and request.last_error:
        return (
            f"Brain could not reach {service} (it will keep trying)",
            True,
            f"Could not reach {service}; trying again",
        )
    if request.status == Status.FAILED and request.attempts > MAX_RETRIES:
        what = f"Brain tried {request.attempts} times to reach {service} and stopped"
        return what, False, f"Not sent: could not reach {service}"
    if request.status == Status.FAILED:
        what = (
            f"Brain could not send it by {request.channel_label.lower()}, as the address or Brain's settings for "
            "it were refused (an admin sees why on this request in the admin)"
        )
        return what, False, "Not sent: refused"
    return None
