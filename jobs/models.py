"""Jobs, their runs and their chats. A job's chat outlives it: deleting a job keeps its past runs."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from brain.infra.ids import format_id
from brain.models import Activity, Organisation


class Chat(models.Model):
    """The conversation a job reports into: its prompt, then each run's report."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    title = models.CharField(max_length=120)
    shared = models.BooleanField(default=False, help_text="Readable by the organisation, like its job.")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.title


class Job(models.Model):
    class Kind(models.TextChoices):
        ONCE = "once"
        RECURRING = "recurring"

    class Scope(models.TextChoices):
        PERSONAL = "personal"
        SHARED = "shared", "shared: visible to and managed by the organisation, still run as its owner"

    class Mode(models.TextChoices):
        AGENT = "agent"
        CHAT = "chat"

    class Memory(models.TextChoices):
        ORG = "org"
        PERSONAL = "personal"
        OFF = "off"

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=120)
    prompt = models.TextField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    cron = models.CharField(max_length=120, blank=True, help_text="Five fields, for a recurring job.")
    at = models.DateTimeField(null=True, blank=True, help_text="The moment of a one-off job.")
    time_zone = models.CharField(max_length=64, default="UTC")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.PERSONAL)
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.AGENT)
    model = models.CharField(max_length=100, default="auto")
    memory = models.CharField(max_length=16, choices=Memory.choices)
    enabled = models.BooleanField(default=True)
    notify = models.BooleanField(default=False, help_text="Mail the owner each run's report.")
    write_tools = models.JSONField(
        default=list, blank=True, help_text="The write tools its owner granted its unattended runs (none by default)."
    )
    personal_only = models.BooleanField(
        default=False,
        help_text="Made or changed over a connection limited to personal memories: its runs are limited the same way.",
    )
    paused_reason = models.CharField(max_length=300, blank=True)
    next_run_at = models.DateTimeField(null=True, blank=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_status = models.CharField(max_length=16, blank=True)
    chat = models.ForeignKey(Chat, on_delete=models.RESTRICT, related_name="+")  # the chat outlives the job
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["org", "owner"], name="job_org_owner")]

    def __str__(self) -> str:
        return self.name

    @property
    def public_id(self) -> str:
        return format_id("job", self.pk)


class Run(models.Model):
    """One run of a job at one scheduled moment: at most one per job and moment, whichever beat
    or redelivery asks for it. A run asked for by hand is saved queued before its message is sent,
    so a broker outage loses nothing: the jobs sweep sends it again."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        FAILED = "failed"

    class Audience(models.TextChoices):
        MEMBERS = "members", "read only what every member may read"
        OWNER = "owner", "read with its owner's reach: its owner's alone"

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="runs")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    scheduled_for = models.DateTimeField()
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    report = models.TextField(blank=True)
    error = models.CharField(max_length=1000, blank=True)
    activity = models.ForeignKey(Activity, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    tool_calls = models.JSONField(default=list, help_text="The tools the run called, in order.")
    audience = models.CharField(
        max_length=16,
        choices=Audience.choices,
        default=Audience.OWNER,
        help_text="Whose reach the run read with: who may read its report.",
    )

    class Meta:
        ordering = ["-scheduled_for", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["job", "scheduled_for"], name="run_once_per_moment"),
        ]

    def __str__(self) -> str:
        return f"{self.chat} at {self.scheduled_for:%Y-%m-%d %H:%M}"

    @property
    def public_id(self) -> str:
        return format_id("run", self.pk)


class Message(models.Model):
    class Role(models.TextChoices):
        PROMPT = "prompt"
        REPORT = "report"

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    text = models.TextField()
    run = models.OneToOneField(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="message")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.role} in {self.chat}"
