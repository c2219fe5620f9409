"""People Brain may ask, and the questions put to them."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from pgvector.django import VectorField

from brain.infra.ids import format_id
from brain.models import Activity, ApiToken, Organisation
from contacts.validation import ADDRESS_FIELD, channel_problems, normalise_phone

CHANNELS = list(ADDRESS_FIELD)
CHANNEL_LABELS = {"email": "Email", "slack": "Slack", "call": "Phone call", "whatsapp": "WhatsApp"}


class Contact(models.Model):
    """Someone an admin set up to answer questions on some topics, and how to reach them."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="contacts")
    name = models.CharField(max_length=200)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="contact_profiles",
        help_text="The Brain user this person is, if any (lets them be asked on their own behalf).",
    )
    topics = models.TextField(blank=True, help_text="What they can answer, in plain words.")
    topics_embedding = VectorField(dimensions=384, null=True, blank=True)
    topics_embedding_model = models.CharField(max_length=200, blank=True, help_text="The model behind the vector.")
    email = models.EmailField(blank=True)
    slack = models.CharField(
        max_length=500, blank=True, help_text="A Slack incoming-webhook URL, or a user/channel id."
    )
    phone = models.CharField(max_length=20, blank=True, help_text="E.164, e.g. +34600111222; for calls and WhatsApp.")
    channels = ArrayField(
        models.CharField(max_length=16),
        default=list,
        blank=True,
        help_text="Channels this person may be reached on: email, slack, call, whatsapp.",
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def topics_text(self) -> str:
        """What the topic vector is made from."""
        return f"{self.name}: {self.topics}" if self.topics else self.name

    @property
    def public_id(self) -> str:
        return format_id("con", self.pk)

    def address_for(self, channel: str) -> str:
        field = ADDRESS_FIELD.get(channel)
        return str(getattr(self, field)) if field else ""

    def clean(self) -> None:
        """Every channel the contact may be reached on has its address; a phone number is E.164."""
        self.phone = normalise_phone(self.phone)
        problems = channel_problems(channels=self.channels, email=self.email, slack=self.slack, phone=self.phone)
        if problems:
            raise ValidationError(problems)


def _request_id() -> str:
    return f"req_{secrets.token_hex(8)}"


class HumanRequest(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        SENDING = "sending"
        SENT = "sent"
        DELIVERED = "delivered"
        ANSWERED = "answered"
        FAILED = "failed"
        # Nothing could carry it (no mail server is set up): the asker passes the answer link on.
        NOT_SENT = "not_sent", "Not sent"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="human_requests")
    public_id = models.CharField(max_length=40, unique=True, default=_request_id)
    requester = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="human_requests")
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    contact = models.ForeignKey(Contact, on_delete=models.RESTRICT, related_name="requests")
    channel = models.CharField(max_length=16)
    question = models.TextField()
    gap_analysis = models.TextField(blank=True)
    activity = models.ForeignKey(Activity, null=True, blank=True, on_delete=models.SET_NULL)
    requester_directed = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    # When it is next looked at: a queued request is not tried before (its retry is pending);
    # one being sent past this time was interrupted with its worker and is queued again.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    provider_id = models.CharField(max_length=200, blank=True)
    answer = models.TextField(blank=True)
    saved_document = models.ForeignKey("memory.Document", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "requester", "-created_at"], name="request_requester")]

    def __str__(self) -> str:
        return f"{self.public_id} to {self.contact}"

    @property
    def channel_label(self) -> str:
        return CHANNEL_LABELS.get(self.channel, self.channel)
