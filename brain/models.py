"""Core models: the tenant, who belongs to it, how they reach Brain, and what they did."""

from __future__ import annotations

import secrets
import uuid
from datetime import timedelta
from zoneinfo import available_timezones

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone


def validate_time_zone(value: str) -> None:
    if value not in available_timezones() or value == "localtime":  # a name, not the machine's own zone file
        raise ValidationError(f"{value!r} is not an IANA time zone; write one like Europe/Madrid or UTC.")


def default_embedder() -> str:
    return str(settings.BRAIN_EMBEDDER)


class Organisation(models.Model):
    LANGUAGES = [("en", "English"), ("es", "Spanish")]
    EMBEDDERS = [
        ("minilm", "all-MiniLM-L6-v2 on this machine"),
        ("openai", "the configured OpenAI-compatible endpoint"),
    ]

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    language = models.CharField(
        max_length=8, choices=LANGUAGES, default="en", help_text="Language of fixed messages to assistants."
    )
    memory_built_at = models.DateTimeField(
        null=True, blank=True, help_text="When the memory was first ready to answer; empty means still collecting."
    )
    ingestion_paused_at = models.DateTimeField(
        null=True, blank=True, help_text="While set, new documents wait instead of being ingested."
    )
    # Which model's vectors serve this organisation's searches, and the one a switch is moving it to
    # (``manage.py reembed --to``; memory.index.serving). Changing BRAIN_EMBEDDER moves no one.
    time_zone = models.CharField(
        max_length=64,
        default="UTC",
        validators=[validate_time_zone],
        help_text="An IANA time zone (Europe/Madrid): when nightly work runs, and its days.",
    )
    embedder = models.CharField(
        max_length=16,
        choices=EMBEDDERS,
        default=default_embedder,
        help_text="The model whose vectors serve searches; switch it with manage.py reembed --to.",
    )
    embedder_next = models.CharField(
        max_length=16,
        choices=EMBEDDERS,
        blank=True,
        help_text="While set, vectors of this model are being computed beside the serving ones; "
        "the old ones serve until all are done.",
    )
    trash_days = models.PositiveSmallIntegerField(
        default=30,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
        help_text="Days a deleted document or forgotten memory stays in the trash, restorable, before it "
        "is deleted for good (1 to 365).",
    )
    audit_days = models.PositiveSmallIntegerField(
        default=365,
        validators=[MinValueValidator(30), MaxValueValidator(3650)],
        help_text="Days the audit trail keeps a record before the nightly purge deletes it (30 to 3650).",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    ADMIN, MEMBER = "admin", "member"
    ROLES = [(ADMIN, "Admin"), (MEMBER, "Member")]

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=ROLES, default=MEMBER)
    # The opaque profile id shown to assistants; it says nothing about database ids.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "user"], name="membership_unique_user_per_org")]

    def __str__(self) -> str:
        return f"{self.user} in {self.org} ({self.role})"


class AccountSettings(models.Model):
    """What a person chooses for themselves on their account page, across their organisations."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account_settings")
    # Times on pages show in this zone; blank: in each organisation's own zone.
    time_zone = models.CharField(max_length=64, blank=True, default="", validators=[validate_time_zone])

    def __str__(self) -> str:
        return f"settings of {self.user}"


class MembershipInvitation(models.Model):
    """An invitation to an organisation for someone who has an account already (brain.core.invitations):
    no membership until they accept it, signed in as themselves, before ``expires_at``; they may
    decline it instead. At most one is open per person and organisation."""

    OPEN, ACCEPTED, DECLINED = "open", "accepted", "declined"
    ANSWERS = [(OPEN, "Open"), (ACCEPTED, "Accepted"), (DECLINED, "Declined")]

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="invitations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=16, choices=Membership.ROLES, default=Membership.MEMBER)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)  # in its address
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    answer = models.CharField(max_length=16, choices=ANSWERS, default=OPEN)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["org", "user"], condition=models.Q(answer="open"), name="invitation_one_open_per_user"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} to {self.org} ({self.answer})"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()


def _token_prefix() -> str:
    return secrets.token_hex(4)


# The prefix of a connected app's row (brain.oauth): not hex, so no brn_ token ever has it.
CONNECTED_APP_PREFIX = "app"


class ApiToken(models.Model):
    READ, WRITE, PERSONAL = "read", "write", "personal"
    # personal: writes are limited to the token owner's personal memory; shared knowledge is refused.
    SCOPES = [READ, WRITE, PERSONAL]
    # The three kinds of access a person chooses from, with the scopes each grants and its name in words.
    ACCESS = {
        READ: ([READ], "Read only"),
        WRITE: ([READ, WRITE], "Read and write"),
        PERSONAL: ([READ, WRITE, PERSONAL], "Personal memories only"),
    }

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="tokens")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, default=_token_prefix, db_index=True)
    hashed = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=16), default=list)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Set for an app connected through OAuth (brain.oauth): the row is that connection, and its
    # access tokens act as it. Its hash is of a value nobody holds, so it never works as brn_.
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="connections",
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        if self.is_connected_app:
            return f"{self.name or 'unnamed app'} (connected app)"
        return f"brn_{self.prefix}… ({self.name or 'unnamed'})"

    @property
    def is_connected_app(self) -> bool:
        return self.oauth_application_id is not None or self.prefix == CONNECTED_APP_PREFIX

    @property
    def is_active(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    @property
    def access(self) -> str:
        """Which of ``ACCESS`` the scopes amount to (personal limits write, which implies read)."""
        return self.PERSONAL if self.PERSONAL in self.scopes else self.WRITE if self.WRITE in self.scopes else self.READ

    @property
    def access_label(self) -> str:
        return self.ACCESS[self.access][1]


class Reviewed(models.Model):
    """Knowledge with an owner (``brain.core.reviews``): the member who keeps it correct (not the
    ``owner`` a personal document is read by), how often they review it, when they last said it is
    still correct, and the day its review falls due. Documents and skills are reviewed."""

    steward = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The member who keeps it correct and reviews it.",
    )
    review_every_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Days between reviews; empty for none."
    )
    verified_at = models.DateTimeField(
        null=True, blank=True, help_text="When its steward last said it is still correct."
    )
    review_due_on = models.DateField(
        null=True, blank=True, help_text="The day its review falls due (brain.core.reviews); stale after it."
    )

    class Meta:
        abstract = True


class Category(models.Model):
    DEFAULT_SLUG = "general"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="categories")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    restricted = models.BooleanField(default=False, help_text="Only members of the chosen groups may read it.")
    groups = models.ManyToManyField(Group, blank=True, related_name="brain_categories")
    # What a document saved into the category without a steward of its own starts with (a connector's
    # documents, uploaded files): brain.core.reviews.
    steward = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Steward of documents saved into it without one of their own.",
    )
    review_every_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Days between reviews for those documents; empty for none."
    )

    class Meta:
        verbose_name_plural = "categories"
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="category_unique_slug_per_org")]

    def __str__(self) -> str:
        return f"{self.org.slug}/{self.slug}"


class OrganisationGroup(models.Model):
    """Ties a permission group to one organisation: the admin offers a category only the groups of
    its own organisation, and refuses others. Operators tie groups on the group's admin page."""

    group = models.OneToOneField(Group, on_delete=models.CASCADE, primary_key=True, related_name="organisation_link")
    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="group_links")

    def __str__(self) -> str:
        return f"{self.group.name} in {self.org.slug}"


class Features(models.Model):
    """Per-organisation switches; the registers and jobs tools appear only when switched on."""

    org = models.OneToOneField(Organisation, on_delete=models.CASCADE, related_name="features")
    commitments = models.BooleanField(
        default=False,
        help_text="Who promised what by when: read nightly from meeting notes and chat, with a nightly look "
        "for evidence that each promise landed; the commitment tools appear to assistants.",
    )
    contradictions = models.BooleanField(
        default=False,
        help_text="Pairs of current statements from different sources that cannot both be true, found nightly "
        "and answered by people (here in the admin or by an assistant); the contradiction tools appear.",
    )
    glossary = models.BooleanField(
        default=False,
        help_text="The organisation's own words (acronyms, product and process names, terms of art), found "
        "nightly in shared text and defined by people; the glossary tools appear.",
    )
    jobs = models.BooleanField(default=False, help_text="Scheduled jobs that run as their owner; the job tools appear.")
    # What the organisation's connections to other systems add to its tools: ``connector:<kind>``
    # for each kind it has a connection of, ``grant:<tool>`` for each ACTION tool an admin granted.
    # Kept here by ``brain.core.services.set_connected_tools`` so reading the features stays one row.
    connected = ArrayField(models.CharField(max_length=100), default=list, blank=True, editable=False)

    class Meta:
        verbose_name_plural = "features"

    def __str__(self) -> str:
        return f"features of {self.org.slug}"

    SWITCHES = ("commitments", "contradictions", "glossary", "jobs")

    def enabled(self) -> set[str]:
        return {name for name in self.SWITCHES if getattr(self, name)} | set(self.connected)


def _activity_id() -> str:
    return f"act_{secrets.token_hex(10)}"


class Activity(models.Model):
    """Groups the calls an assistant makes to answer one question."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="activities")
    public_id = models.CharField(max_length=40, default=_activity_id, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    label = models.CharField(max_length=200, blank=True)
    conversation_id = models.CharField(max_length=200, blank=True)
    user_question_hash = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "activities"

    def __str__(self) -> str:
        return self.public_id


class ToolCall(models.Model):
    """One call through MCP or the REST API, for usage, billing and diagnostics."""

    OK, ERROR, REFUSED, DENIED = "ok", "error", "refused", "denied"
    OUTCOMES = [(OK, "ok"), (ERROR, "unexpected error"), (REFUSED, "refused"), (DENIED, "denied")]

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="tool_calls")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    tool = models.CharField(max_length=80)
    via = models.CharField(max_length=16)
    activity = models.ForeignKey(Activity, null=True, blank=True, on_delete=models.SET_NULL)
    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    duration_ms = models.FloatField(default=0)
    outcome = models.CharField(max_length=16, choices=OUTCOMES, default=OK)
    error_code = models.CharField(max_length=64, blank=True)
    credits = models.IntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["org", "started_at"], name="toolcall_org_started")]

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome})"


def _report_expiry() -> object:
    return timezone.now() + timedelta(days=settings.BRAIN_REPORT_RETENTION_DAYS)


class Report(models.Model):
    """An issue or a suggestion an assistant recorded; kept for a limited time."""

    ISSUE, FEEDBACK = "issue", "feedback"
    KINDS = [(ISSUE, "Issue"), (FEEDBACK, "Feedback")]
    CATEGORIES = ["missing_information", "wrong_answer", "tool_error", "access_problem"]
    ORIGINS = ["user", "agent"]

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="reports")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    kind = models.CharField(max_length=16, choices=KINDS)
    category = models.CharField(max_length=32, blank=True)
    tool_name = models.CharField(max_length=80, blank=True)
    observed = models.TextField(blank=True)
    expected = models.TextField(blank=True)
    user_request = models.TextField(blank=True)
    error_message = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    origin = models.CharField(max_length=16, blank=True)
    context = models.TextField(blank=True)
    blocked = models.BooleanField(default=False)
    activity = models.ForeignKey(Activity, null=True, blank=True, on_delete=models.SET_NULL)
    activity_ref = models.CharField(max_length=80, blank=True)
    client_name = models.CharField(max_length=200, blank=True)
    client_version = models.CharField(max_length=100, blank=True)
    session_ref = models.CharField(max_length=200, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    release = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(default=_report_expiry, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind}: {(self.category or self.summary)[:60]}"


class AuditRecord(models.Model):
    """Who changed access or history, what and when. Written by ``brain.core.audit.record_audit`` only.

    ``who`` keeps the name at the time, so the record still reads after the user is deleted.
    A write from the command line names no user: the person at the shell is an operator.
    """

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="audit_records")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    who = models.CharField(max_length=200)
    via = models.CharField(max_length=16)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=80, db_index=True)
    target = models.CharField(max_length=200)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["org", "-created_at"], name="audit_org_created")]

    def __str__(self) -> str:
        return f"{self.who} {self.action} {self.target}"


class SpentCode(models.Model):
    """An OAuth authorisation code that was exchanged, and the token family its exchange began
    (brain.oauth.codes): a second use of the code ends that family. Stored as a hash, as tokens
    are; kept while any token of the family is."""

    code_checksum = models.CharField(max_length=64, unique=True)
    token_family = models.UUIDField()
    spent_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"code spent at {self.spent_at:%Y-%m-%d %H:%M}"


class RegistrationCount(models.Model):
    """How many OAuth clients one address registered in one hour (brain.oauth.registrations): in the
    database, so every web process counts against the same number and a restart resets nothing."""

    address = models.CharField(max_length=100)
    hour = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["address", "hour"], name="registration_count_address_hour")]

    def __str__(self) -> str:
        return f"{self.address or 'unknown address'}: {self.count} at {self.hour:%Y-%m-%d %H:00}"


class OutboxMessage(models.Model):
    """A message for the worker, saved in the transaction of the row it is about and deleted once the
    broker has it (brain.infra.queueing): a broker that is away, frozen or slow delays work, never a save."""

    task = models.CharField(max_length=200)
    row_id = models.BigIntegerField()
    queue = models.CharField(max_length=100, blank=True)  # blank: the task's route (CELERY_TASK_ROUTES)
    what = models.CharField(max_length=100)  # for the log: "document", "upload", "job run", ...
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"{self.task}({self.row_id})"


class SingleSignOn(models.Model):
    """How an organisation's people sign in with its OpenID Connect provider (``brain.sso``).

    The client secret is kept sealed (``brain.infra.sealing``); the maps turn values of the groups
    claim into a membership role and into the organisation's permission groups, at every sign-in."""

    DOMAIN, INVITED = "domain", "invited"
    PROVISION = [
        (DOMAIN, "Anyone whose e-mail domain is allowed joins on first sign-in"),
        (INVITED, "Only people already invited or added may sign in"),
    ]

    org = models.OneToOneField(Organisation, on_delete=models.CASCADE, related_name="single_sign_on")
    enabled = models.BooleanField(default=True, help_text="Show the sign-in button and accept sign-ins.")
    label = models.CharField(
        max_length=60, help_text='The provider\'s name on the login button, e.g. "Okta" or "Acme Google".'
    )
    issuer = models.URLField(
        max_length=500,
        help_text="The provider's issuer URL; Brain reads <issuer>/.well-known/openid-configuration.",
    )
    client_id = models.CharField(max_length=300)
    sealed_client_secret = models.TextField(blank=True, editable=False)
    scopes = models.CharField(
        max_length=300, default="openid email profile", help_text='Add "groups" for Okta and Keycloak.'
    )
    allowed_domains = ArrayField(
        models.CharField(max_length=253),
        default=list,
        blank=True,
        help_text="E-mail domains that may sign in, comma-separated (example.com). Empty: any domain, "
        "invited people only.",
    )
    provision = models.CharField(max_length=16, choices=PROVISION, default=INVITED)
    groups_claim = models.CharField(
        max_length=100, default="groups", help_text="The claim that lists the person's groups at the provider."
    )
    role_map = models.JSONField(
        default=dict,
        blank=True,
        help_text='Group claim value to role, e.g. {"brain-admins": "admin", "staff": "member"}. '
        "Empty: roles are set in Brain only.",
    )
    group_map = models.JSONField(
        default=dict,
        blank=True,
        help_text='Group claim value to a group of this organisation, e.g. {"finance": "Finance"}.',
    )
    password_sign_in = models.BooleanField(
        default=True,
        help_text="Off: members sign in with the provider only; the organisation's admins and "
        "superusers keep their password.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "single sign-on"
        verbose_name_plural = "single sign-on"

    def __str__(self) -> str:
        return f"{self.label} for {self.org.slug}"


class SsoIdentity(models.Model):
    """Which account a person at an organisation's provider signs in as (the ``sub`` claim), kept
    so that a later change of e-mail at the provider cannot move the sign-in to someone else."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    created_at = models.DateTimeField(default=timezone.now)
    last_sign_in_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "issuer", "subject"], name="sso_identity_unique_subject"),
            models.UniqueConstraint(fields=["org", "user"], name="sso_identity_one_per_member"),
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
