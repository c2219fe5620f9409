"""Asking people: routing a question to a contact, dispatching it, taking the answer."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from brain.core.actors import Actor
from brain.core.audit import record_audit
from brain.core.errors import InvalidArgument, NotFound, PermissionDenied
from brain.core.inputs import text_problem
from brain.core.services import resolve_activity
from brain.infra.ids import is_random_id, parse_numeric_id
from brain.infra.mail import NOT_SET_UP, mail_is_set_up
from brain.infra.queueing import send_now, send_on_commit
from brain.models import Organisation
from contacts.models import CHANNELS, Contact, HumanRequest
from contacts.transports import Message, TransportError, configured_channels, is_webhook_url, transport_for
from memory.documents.saving import add_document
from memory.index.embedding import Embedder, get_embedder
from memory.index.serving import query_vector
from memory.maintenance.reembedding import KeptElsewhere

logger = logging.getLogger("brain.contacts")
SIGNING_SALT = "brain.contacts.answer"
DELIVER_TASK = "contacts.tasks.deliver_request_task"
Status = HumanRequest.Status
# A temporary failure is retried six times (30 s doubling, at most 30 minutes apart), then the
# request fails. Attempts are counted on the request, so sweeps cannot start a new count.
MAX_RETRIES = 6
# A provider's Retry-After is honoured up to a day: past that a typo or a hostile answer would park
# the request for good, and the retries still run out after MAX_RETRIES.
MAX_RETRY_AFTER = 86_400
# What the request records when nothing can carry it; the pages say it in words (contacts.undelivered).
NO_MAIL_SERVER = f"{NOT_SET_UP} (EMAIL_HOST is empty): the answer link is shown to the asker to pass on"
INTERRUPTED = "the delivery was interrupted; sending again"
NO_WRITTEN_LINK = "the call went, but the answer link could not be sent in writing (see the logs)"


def retry_delay(attempts: int, *, retry_after: float | None = None) -> int:
    """Seconds before the next try, after ``attempts`` tries that failed for now: the backoff, or
    the provider's ``retry_after`` when it asked for a longer wait."""
    backoff = int(min(30 * 2 ** max(attempts - 1, 0), 1800))
    if retry_after is None:
        return backoff
    return max(backoff, math.ceil(min(retry_after, MAX_RETRY_AFTER)))


class RetryLater(Exception):  # noqa: N818 -- a signal to the task, not an error
    """A temporary failure was recorded; the task should try again in ``seconds``."""

    def __init__(self, reason: str, seconds: int) -> None:
        super().__init__(reason)
        self.seconds = seconds

    def __reduce__(self) -> tuple[object, ...]:
        return (RetryLater, (str(self), self.seconds))


def save_contact_topics(contact: Contact) -> None:
    """Embed what the contact can answer, for routing, and record the model that did it."""
    embedder = get_embedder(Organisation.objects.values_list("embedder", flat=True).get(pk=contact.org_id))
    vector = embedder.embed([contact.topics_text])[0]
    contact.topics_embedding, contact.topics_embedding_model = vector, embedder.name[:200]
    Contact.objects.filter(pk=contact.pk).update(
        topics_embedding=contact.topics_embedding, topics_embedding_model=contact.topics_embedding_model
    )


def reembed_contact_topics(*, org: Organisation | None = None, resume: bool = False) -> int:
    """Re-embed every contact's topics with its organisation's model (with ``resume``, only those
    made by another model)."""
    done = 0
    for each in [org] if org is not None else Organisation.objects.order_by("pk"):
        contacts = Contact.objects.filter(org=each)
        if resume:
            contacts = contacts.exclude(topics_embedding_model=get_embedder(each.embedder).name[:200])
        for contact in contacts.iterator():
            save_contact_topics(contact)
            done += 1
    return done


def switch_contact_topics(org: Organisation, target: Embedder) -> None:
    """Give every contact's topics the target model's vectors (inside the transaction that completes
    an organisation's switch of model; a contact list is short, so none is missed)."""
    contacts = list(Contact.objects.filter(org=org))
    topics: Any = target.embed([c.topics_text for c in contacts]) if contacts else []
    for contact, vector in zip(contacts, topics, strict=True):
        Contact.objects.filter(pk=contact.pk).update(topics_embedding=vector, topics_embedding_model=target.name[:200])


CONTACT_TOPICS = KeptElsewhere(
    name="contact topics",
    reembed=lambda org, resume: reembed_contact_topics(org=org, resume=resume),
    switch=switch_contact_topics,
)


def reachable_channels(contact: Contact, allowed: Sequence[str] | None) -> list[str]:
    """The contact's channels that have an address, are allowed for this request and configured here
    (a Slack incoming-webhook address needs no bot token)."""
    usable = configured_channels()
    wanted = allowed or CHANNELS
    return [
        c
        for c in contact.channels
        if c in wanted
        and contact.address_for(c)
        and (c in usable or (c == "slack" and is_webhook_url(contact.address_for(c))))
    ]


@dataclass(frozen=True)
class Route:
    contact: Contact
    channel: str
    score: float


def route(
    *, actor: Actor, question: str, allowed: Sequence[str] | None = None, contact_name: str | None = None
) -> Route:
    """Pick who to ask, and over which channel; nothing is sent."""
    contacts = list(Contact.objects.filter(org=actor.org, active=True))
    if contact_name:
        wanted = contact_name.strip().lower()
        contacts = [c for c in contacts if c.name.lower() == wanted] or [
            c for c in contacts if wanted in c.name.lower()
        ]
        if not contacts:
            raise NotFound(
                f"{contact_name} is not a configured contact in Brain; tell the user, and do not contact them "
                "any other way through Brain."
            )
    reachable = [(c, reachable_channels(c, allowed)) for c in contacts]
    reachable = [(c, channels) for c, channels in reachable if channels]
    if not reachable:
        over = ", ".join(allowed) if allowed else "any configured channel"
        raise InvalidArgument(f"No configured contact can be reached over {over}; nothing was sent.")
    vector = query_vector(actor.org, question)
    scored = []
    for contact, channels in reachable:
        # A vector from another model is not comparable with the question's: route on channels alone.
        comparable = contact.topics_embedding is not None and contact.topics_embedding_model == vector.model
        topics = np.asarray(contact.topics_embedding, dtype=np.float32) if comparable else None
        scored.append(Route(contact, channels[0], float(topics @ vector.values) if topics is not None else 0.0))
    return max(scored, key=lambda r: r.score)


def parse_contact_id(value: str) -> int:
    contact_id = parse_numeric_id(value, "con", bare=True)
    if contact_id is None:
        raise InvalidArgument(f"{value!r} is not a contact id; pass the contact_id the preview returned (con_...).")
    return contact_id


@transaction.atomic
def dispatch_request(
    *,
    actor: Actor,
    question: str,
    contact_id: int,
    gap_analysis: str = "",
    allowed: Sequence[str] | None = None,
    activity_id: str | None = None,
    requester_directed: bool = False,
) -> HumanRequest:
    """Queue a question to the previewed contact; delivery runs in the background."""
    if not actor.can_write:
        raise PermissionDenied("Asking a person needs a token with the write scope.")
    contact = Contact.objects.filter(org=actor.org, pk=contact_id, active=True).first()
    if contact is None:
        raise NotFound(f"No active contact con_{contact_id}; preview again to get one.")
    if requester_directed and contact.user_id != actor.user.pk:
        raise InvalidArgument(
            "requester_directed is only for contacting the user themselves, and the previewed contact is someone "
            "else; nothing was sent. Ask the user to confirm before contacting that person."
        )
    channels = reachable_channels(contact, allowed)
    if not channels:
        raise InvalidArgument(f"{contact.name} cannot be reached over the allowed channels; nothing was sent.")
    held = unsendable(channels[0])
    request = HumanRequest.objects.create(
        org=actor.org,
        requester=actor.user,
        token=actor.token,
        contact=contact,
        channel=channels[0],
        question=question,
        gap_analysis=gap_analysis,
        requester_directed=requester_directed,
        activity=resolve_activity(actor=actor, activity_id=activity_id),
        status=Status.NOT_SENT if held else Status.QUEUED,
        last_error=held,
    )
    if not held:
        send_on_commit(DELIVER_TASK, request.pk, what="request")
    return request


def unsendable(channel: str) -> str:
    """Why nothing can carry a request over ``channel`` here ("" when something can): kept, not
    sent, its answer link is for the asker to pass on."""
    return NO_MAIL_SERVER if channel == "email" and not mail_is_set_up() else ""


def sweep_queued_requests(*, grace_seconds: int | None = None) -> int:
    """Queue again the requests whose message was lost: queued and due for longer than the grace
    (a broker outage at save time, a broker restart), or being sent past the send lease (the
    worker died mid-send). A request waiting for its retry is not due, so it is left alone, and
    delivery claims a request only when it is due: a request is never tried early or twice."""
    grace = settings.BRAIN_QUEUED_GRACE_SECONDS if grace_seconds is None else grace_seconds
    now = timezone.now()
    cutoff = now - timedelta(seconds=grace)
    HumanRequest.objects.filter(status=Status.SENDING, next_attempt_at__lt=now).update(
        status=Status.QUEUED, next_attempt_at=now, last_error=INTERRUPTED
    )
    due = Q(next_attempt_at__isnull=True, created_at__lte=cutoff) | Q(next_attempt_at__lte=cutoff)
    ids = list(HumanRequest.objects.filter(due, status=Status.QUEUED).values_list("pk", flat=True)[:1000])
    for request_id in ids:
        send_now(DELIVER_TASK, request_id, what="request")
    return len(ids)


class _SignedWhenAsked(signing.TimestampSigner):
    """Signs with the moment the question was asked, so a request has one answer link: the one its
    message carries is the one its page shows, and it expires a fixed time after the asking."""

    def __init__(self, asked_at: datetime) -> None:
        super().__init__(salt=SIGNING_SALT)
        self.asked_at = asked_at

    def timestamp(self) -> str:
        return signing.b62_encode(int(self.asked_at.timestamp()))


def answer_url(request: HumanRequest) -> str:
    token = _SignedWhenAsked(request.created_at).sign(request.public_id)
    return f"{settings.BRAIN_BASE_URL}/answer/{token}/"


def answer_link_expires(request: HumanRequest) -> datetime:
    return request.created_at + timedelta(days=settings.BRAIN_ANSWER_LINK_DAYS)


def request_from_token(token: str) -> HumanRequest:
    """The request behind a signed answer link; forged or expired links are refused."""
    try:
        public_id = signing.TimestampSigner(salt=SIGNING_SALT).unsign(
            token, max_age=timedelta(days=settings.BRAIN_ANSWER_LINK_DAYS)
        )
    except signing.SignatureExpired:
        raise PermissionDenied("This answer link has expired; ask for the question to be sent again.") from None
    except signing.BadSignature:
        raise PermissionDenied("This answer link is not valid.") from None
    request = HumanRequest.objects.filter(public_id=public_id).select_related("contact", "requester", "org").first()
    if request is None:
        raise NotFound("This question no longer exists.")
    return request


def deliver_request(*, request_id: int) -> str:
    """Send one queued request over its channel. Safe to run twice: only a queued request that
    is due is claimed.

    A temporary failure puts it back in the queue and raises ``RetryLater`` (the task retries),
    until the retries run out; a permanent one marks it failed.
    """
    now = timezone.now()
    claimed = (
        HumanRequest.objects.filter(pk=request_id, status=Status.QUEUED)
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .update(
            status=Status.SENDING,
            attempts=F("attempts") + 1,
            next_attempt_at=now + timedelta(seconds=settings.BRAIN_SEND_LEASE_SECONDS),
        )
    )
    if not claimed:
        return "skipped"
    request = HumanRequest.objects.select_related("contact", "requester").get(pk=request_id)
    if held := unsendable(request.channel):  # the mail server went away since it was asked
        HumanRequest.objects.filter(pk=request_id).update(status=Status.NOT_SENT, last_error=held, next_attempt_at=None)
        return "not sent"
    message = Message(
        to_name=request.contact.name,
        address=request.contact.address_for(request.channel),
        subject=f"A question for you from {request.requester.get_full_name() or request.requester.get_username()}",
        text=_message_text(request),
        answer_url=answer_url(request),
        reference=request.public_id,
    )
    try:
        linked = request.channel != "call" or _send_link_for_call(request, message)
        provider_id = transport_for(request.channel).send(message)
    except TransportError as exc:
        return _record_failure(request, exc)
    HumanRequest.objects.filter(pk=request_id).update(
        status=Status.SENT,
        sent_at=timezone.now(),
        provider_id=provider_id[:200],
        last_error="" if linked else NO_WRITTEN_LINK,  # the asker is given the link to pass on
        next_attempt_at=None,
    )
    return "sent"


def _record_failure(request: HumanRequest, exc: Exception) -> str:
    permanent = isinstance(exc, TransportError) and exc.permanent
    if permanent or request.attempts > MAX_RETRIES:
        reason = str(exc) if permanent else f"gave up after {request.attempts} attempts: {exc}"
        HumanRequest.objects.filter(pk=request.pk).update(
            status=Status.FAILED, last_error=reason[:2000], next_attempt_at=None
        )
        return "failed"
    retry_after = exc.retry_after if isinstance(exc, TransportError) else None
    seconds = retry_delay(request.attempts, retry_after=retry_after)
    HumanRequest.objects.filter(pk=request.pk).update(
        status=Status.QUEUED, last_error=str(exc)[:2000], next_attempt_at=timezone.now() + timedelta(seconds=seconds)
    )
    raise RetryLater(str(exc), seconds) from exc


def _send_link_for_call(request: HumanRequest, message: Message) -> bool:
    """A call cannot carry a link: send it in writing too, over WhatsApp or email, before calling.
    Whether it went."""
    for channel in ("whatsapp", "email"):
        address = request.contact.address_for(channel)
        if address and channel in configured_channels():
            try:
                transport_for(channel).send(dataclasses.replace(message, address=address))
                return True
            except TransportError as exc:
                logger.warning("could not send the answer link for %s over %s: %s", request.public_id, channel, exc)
    return False


def _message_text(request: HumanRequest) -> str:
    who = request.requester.get_full_name() or request.requester.get_username()
    parts = [f"{who} asked Brain, the company memory, something it could not answer:", "", request.question]
    if request.gap_analysis:
        parts += ["", "What is missing:", request.gap_analysis]
    parts += ["", f"Answer here: {answer_url(request)}"]
    return "\n".join(parts)


@transaction.atomic
def record_answer(*, request: HumanRequest, answer: str, by: User | None = None) -> HumanRequest:
    """Take the person's answer: through the answer link (``by`` None: whoever holds the link) or
    on their requests page, signed in as the contact (``by``, found by ``get_question_for``).
    Both are audited alike; the asker is told by mail when there is a mail server."""
    answer = answer.strip()
    if not answer:
        raise InvalidArgument("Write an answer before sending.")
    if len(answer) > 20_000:
        raise InvalidArgument("The answer is too long (20,000 characters at most).")
    if problem := text_problem(answer):
        raise InvalidArgument(f"The answer {problem}; remove it and send the answer again.")
    request = HumanRequest.objects.select_for_update().get(pk=request.pk)
    again = request.status == Status.ANSWERED
    request.answer, request.status, request.answered_at = answer, Status.ANSWERED, timezone.now()
    request.save(update_fields=["answer", "status", "answered_at"])
    record_audit(
        actor=by,
        org=request.org,
        via="web" if by is not None else "link",
        who=None if by is not None else f"{request.contact.name} (answer link)",
        action="request.answered",
        target=f"request {request.public_id}",
        details={"contact": request.contact.public_id, "again": again, "characters": len(answer)},
    )
    if request.requester.email and mail_is_set_up():
        link = f"{settings.BRAIN_BASE_URL}/requests/{request.public_id}/"
        transaction.on_commit(
            lambda: send_mail(
                f"{request.contact.name} answered your question",
                f"{request.answer}\n\nSee it in Brain: {link}",
                None,
                [request.requester.email],
                fail_silently=True,
            )
        )
    return request


def save_answer_to_memory(*, actor: Actor, request_id: str) -> HumanRequest:
    request = None
    if is_random_id(request_id, "req"):
        request = HumanRequest.objects.filter(org=actor.org, requester=actor.user, public_id=request_id).first()
    if request is None:
        raise NotFound("No such request of yours.")
    if request.status != Status.ANSWERED:
        raise InvalidArgument("Only an answered request can be saved into memory.")
    if request.saved_document_id is None:
        saved = add_document(
            actor=actor,
            title=f"{request.contact.name} on: {request.question[:200]}",
            content=f"Question: {request.question}\n\nAnswer from {request.contact.name}: {request.answer}",
            source_kind="human_answer",
            external_id=request.public_id,
        )
        request.saved_document = saved.document
        request.save(update_fields=["saved_document"])
    return request


def send_test_message(*, contact: Contact, channel: str) -> tuple[bool, str]:
    """Send a short test over one channel now (admin action); returns whether it went and what happened."""
    message = Message(
        to_name=contact.name,
        address=contact.address_for(channel),
        subject="Brain test message",
        text="This is a test from Brain, the company memory: you are set up as a contact.",
        answer_url=settings.BRAIN_BASE_URL,
        reference=f"test-{contact.pk}",
    )
    try:
        provider_id = transport_for(channel).send(message)
    except TransportError as exc:
        return False, f"{'permanent' if exc.permanent else 'temporary'} failure: {exc}"
    return True, f"sent{' (' + provider_id + ')' if provider_id else ''}"
