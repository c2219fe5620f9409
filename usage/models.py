"""Plans, accounts, monthly counts and the questions that found nothing."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from brain.core.errors import InvalidArgument
from brain.mcp.prices import BUILT_IN_PLANS
from brain.models import Organisation


class Plan(models.Model):
    """What an organisation may use each month without paying credits.

    Two plans are built in: ``free`` (1,000 free reads a month, then credits) and ``unlimited``
    (nothing is charged or refused). Operators may add their own, for example as team quotas.
    """

    FREE, UNLIMITED = "free", "unlimited"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=100)
    monthly_free_reads = models.PositiveIntegerField(
        default=1000, help_text="Reads free each calendar month before credits are spent."
    )
    unlimited = models.BooleanField(default=False, help_text="Nothing is charged or refused; calls are still counted.")

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name


def get_plan(slug: str | None = None) -> Plan | None:
    """The plan with this slug (``BRAIN_DEFAULT_PLAN`` when None); a built-in one is made if missing."""
    slug = slug or settings.BRAIN_DEFAULT_PLAN
    plan = Plan.objects.filter(slug=slug).first()
    if plan is None and slug in BUILT_IN_PLANS:
        name, free_reads, unlimited = BUILT_IN_PLANS[slug]
        plan, _ = Plan.objects.get_or_create(
            slug=slug, defaults={"name": name, "monthly_free_reads": free_reads, "unlimited": unlimited}
        )
    return plan


def default_plan_id() -> int:
    plan = get_plan()
    if plan is None:
        raise RuntimeError(f"BRAIN_DEFAULT_PLAN names {settings.BRAIN_DEFAULT_PLAN!r}, which is not a plan")
    return plan.pk


class Account(models.Model):
    """An organisation's plan and credit balance. The balance never goes below zero."""

    org = models.OneToOneField(Organisation, on_delete=models.CASCADE, related_name="account", primary_key=True)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="accounts")
    credits = models.BigIntegerField(default=0, help_text="Change it with the 'Add credits' action.")

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(credits__gte=0), name="account_credits_not_negative")]

    def __str__(self) -> str:
        return f"{self.org.slug} on {self.plan.slug}"


class Month(models.Model):
    """One organisation's counts for one calendar month of its own time zone (``month`` is day 1)."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="usage_months")
    month = models.DateField()
    reads = models.BigIntegerField(default=0, help_text="Billed calls that ran, free or paid.")
    free_used = models.BigIntegerField(default=0, help_text="Units taken from the month's free allowance.")
    credits_spent = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["org", "month"], name="usage_month_unique_per_org")]

    def __str__(self) -> str:
        return f"{self.org.slug} {self.month:%Y-%m}"


class Miss(models.Model):
    """A question a search or an ask answered with no evidence: what the memory is missing.

    Kept for ``BRAIN_MISS_RETENTION_DAYS``; admins see the recent ones on the overview page."""

    org = models.ForeignKey(Organisation, on_delete=models.CASCADE, related_name="misses")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    tool = models.CharField(max_length=80)
    question = models.CharField(max_length=500)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "misses"
        indexes = [models.Index(fields=["org", "at"], name="usage_miss_org_at")]

    def __str__(self) -> str:
        return self.question[:60]


def open_account(org: Organisation, plan: str | None) -> None:
    """The new organisation's account on ``plan`` (``BRAIN_DEFAULT_PLAN`` when None); an unknown plan
    is refused (plugged into ``brain.core.services.ORGANISATION_MADE``)."""
    chosen = get_plan(plan)
    if chosen is None:
        raise InvalidArgument(f"No plan {plan or settings.BRAIN_DEFAULT_PLAN!r}.")
    Account.objects.create(org=org, plan=chosen)
