"""Skills: reusable instructions an organisation writes once and its assistants load on demand.

A ``Skill`` is the stable identity (organisation and slug). Its text lives in ``SkillVersion``
rows: every publish adds a pending version, an admin approves or rejects it, and the skill
points at the approved version that is in use.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from brain.models import Category, Organisation, Reviewed

SLUG_MAX = 120
NAME_MAX = 240
CONTENT_MAX = 200_000
DESCRIPTION_MAX = 2_000
VERSION_MAX = 80
DEFAULT_VERSION = "1.0.0"


class Skill(Reviewed):
    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="skills")
    slug = models.CharField(max_length=SLUG_MAX)
    created_at = models.DateTimeField(default=timezone.now)
    current_version = models.ForeignKey(
        "SkillVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The approved version assistants get; empty until a first version is approved.",
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="While set, nobody can use the skill; approving a new version revives it."
    )

    class Meta:
        ordering = ["slug"]
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="skill_unique_slug_per_org")]

    def __str__(self) -> str:
        return self.slug


class SkillVersion(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending review"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        ARCHIVED = "archived", "Archived"

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=VERSION_MAX, default=DEFAULT_VERSION)
    name = models.CharField(max_length=NAME_MAX)
    content = models.TextField()
    description = models.CharField(max_length=DESCRIPTION_MAX, blank=True)
    tags = ArrayField(models.TextField(), default=list, blank=True)
    categories = models.ManyToManyField(Category, related_name="skill_versions")
    assets = models.JSONField(default=list, blank=True)
    scripts = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="submitted_skill_versions"
    )
    submitted_at = models.DateTimeField(default=timezone.now)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reviewed_skill_versions",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.TextField(blank=True, help_text="The reason given for a rejection, or a note on approval.")

    class Meta:
        ordering = ["-submitted_at"]
        indexes = [models.Index(fields=["skill", "status"], name="skillversion_skill_status")]

    def __str__(self) -> str:
        return f"{self.skill.slug} {self.version}"

    @property
    def is_current(self) -> bool:
        return self.skill.current_version_id == self.pk
