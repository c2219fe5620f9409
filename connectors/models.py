"""A connection to another system, and what it brought in."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from brain.mcp.registry import ToolSpec
from brain.models import Category, Organisation
from connectors.kinds import KINDS, tools_of
from connectors.sealing import CredentialsUnreadable, seal_secret, unseal_secret


def _webhook_secret() -> str:
    return secrets.token_hex(32)


def _sealed_webhook_secret() -> str:
    return seal_secret(_webhook_secret())


class Connection(models.Model):
    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="connections")
    kind = models.CharField(max_length=20)
    name = models.CharField(max_length=100)
    # Where what it brings in lands; restricted categories keep it to their groups.
    category = models.ForeignKey(Category, on_delete=models.RESTRICT, related_name="connections")
    options = models.JSONField(default=dict, blank=True)  # what to sync, per kind (connectors.kinds)
    sealed_credentials = models.TextField(blank=True)  # connectors.sealing; never shown again
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    interval_minutes = models.PositiveIntegerField(default=15)
    paused_at = models.DateTimeField(null=True, blank=True)
    # Sync state: the cursor is the kind's own (what was read up to where); a lease held past
    # ``lease_until`` belongs to a worker that died, and the next sync takes over from the cursor.
    cursor = models.JSONField(default=dict, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    last_sync_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    # The source refused the credentials: nothing is retried until they are replaced.
    credentials_refused = models.BooleanField(default=False)
    items = models.PositiveIntegerField(default=0)
    granted_tools = ArrayField(models.CharField(max_length=80), default=list, blank=True)
    # What the source signs its webhooks with (connectors.hooks); made by Brain, shown to admins,
    # sealed at rest like the credentials (connectors.sealing).
    sealed_webhook_secret = models.TextField(default=_sealed_webhook_secret)

    class Meta:
        ordering = ["org", "name"]
        constraints = [models.UniqueConstraint(fields=["org", "name"], name="connection_unique_name")]
        indexes = [models.Index(fields=["next_sync_at"], name="connection_due")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}, {self.org.slug})"

    @property
    def webhook_secret(self) -> str:
        """The webhook secret in the clear, or "" when no configured key opens it (then no delivery
        verifies until the keys are put right)."""
        try:
            return unseal_secret(self.sealed_webhook_secret)
        except CredentialsUnreadable:
            return ""

    @property
    def credential_fields(self) -> dict[str, str]:
        """What its kind asks to paste (name -> in words), for replacing them."""
        return KINDS[self.kind].credential_fields if self.kind in KINDS else {}

    @property
    def tools(self) -> list[tuple[ToolSpec, bool]]:
        """The tools it gives assistants, each with whether it is granted here (only ACTION tools need
        a grant: ``connectors.grants``)."""
        return [(spec, spec.name in self.granted_tools) for spec in tools_of(self.kind)]

    @property
    def state(self) -> str:
        if self.paused_at:
            return "paused"
        if self.credentials_refused or self.last_error:
            return "failing"
        if self.last_sync_at is None:
            return "waiting for its first sync"
        return "active"


class SyncedItem(models.Model):
    """One item of the source, by its own id, and the document that holds its latest version."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="synced")
    source_id = models.CharField(max_length=300)
    version = models.CharField(max_length=100)
    url = models.CharField(max_length=2000, blank=True)
    document = models.ForeignKey("memory.Document", null=True, on_delete=models.SET_NULL, related_name="+")
    withdrawn_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connection", "source_id"], name="synced_item_unique_source_id")]

    def __str__(self) -> str:
        return f"{self.source_id} ({self.version})"


class SourceAudience(models.Model):
    """A part of a connection's source that only its members read (a private Slack channel), with
    the restricted category its items land in and the group of its members in Brain. The sync keeps
    the group equal to the source's members who are members of the organisation (matched by email)."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="audiences")
    key = models.CharField(max_length=100)  # the source's own id (a channel id)
    name = models.CharField(max_length=200)
    category = models.OneToOneField(Category, on_delete=models.CASCADE, related_name="source_audience")
    group = models.OneToOneField("auth.Group", on_delete=models.CASCADE, related_name="source_audience")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connection", "key"], name="source_audience_unique_key")]

    def __str__(self) -> str:
        return f"{self.name} ({self.connection.name})"


class Recheck(models.Model):
    """A part of the source a webhook said changed (the kind's own key, such as a thread), which the
    next sync reads again whatever its cursor says; removed once a sync has read it."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="rechecks")
    key = models.CharField(max_length=200)
    asked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connection", "key"], name="recheck_unique_key")]

    def __str__(self) -> str:
        return self.key


class WebhookDelivery(models.Model):
    """The hash of a signed webhook body Brain accepted (connectors.hooks). The signature covers the
    body, so the same body again within ``BRAIN_WEBHOOK_REPLAY_DAYS`` is a replay and changes
    nothing; kept in the database so every process and a restart know it."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="deliveries")
    digest = models.CharField(max_length=64)  # SHA-256 of the body, hex
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["connection", "digest"], name="webhook_delivery_unique_digest")]
        indexes = [models.Index(fields=["connection", "received_at"], name="webhook_delivery_age")]

    def __str__(self) -> str:
        return f"{self.digest[:12]} ({self.connection_id})"
