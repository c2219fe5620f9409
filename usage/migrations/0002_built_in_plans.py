"""The built-in plans, and an account for every organisation that existed before metering.

Organisations that existed already go on the unlimited plan, so an upgrade changes nothing for
them, and their documents count as paid for (re-ingesting one never charges)."""

from django.db import migrations
from django.db.models import F

from usage.prices import BUILT_IN_PLANS


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    Plan = apps.get_model("usage", "Plan")
    Account = apps.get_model("usage", "Account")
    Organisation = apps.get_model("brain", "Organisation")
    Document = apps.get_model("memory", "Document")
    for slug, (name, free_reads, limitless) in BUILT_IN_PLANS.items():
        Plan.objects.get_or_create(
            slug=slug, defaults={"name": name, "monthly_free_reads": free_reads, "unlimited": limitless}
        )
    unlimited = Plan.objects.get(slug="unlimited")
    for org in Organisation.objects.filter(account__isnull=True):
        Account.objects.create(org=org, plan=unlimited)
    Document.objects.filter(charged_at__isnull=True).update(charged_at=F("recorded_at"))


class Migration(migrations.Migration):
    dependencies = [("usage", "0001_initial"), ("memory", "0010_document_charged_at")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
