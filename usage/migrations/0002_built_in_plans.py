"""The built-in plans, and an account for every organisation that existed before metering.

Organisations that existed already go on the unlimited plan, so an upgrade changes nothing for
them."""

from django.db import migrations

from brain.mcp.prices import BUILT_IN_PLANS


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    Plan = apps.get_model("usage", "Plan")
    Account = apps.get_model("usage", "Account")
    Organisation = apps.get_model("brain", "Organisation")
    for slug, (name, free_reads, limitless) in BUILT_IN_PLANS.items():
        Plan.objects.get_or_create(
            slug=slug, defaults={"name": name, "monthly_free_reads": free_reads, "unlimited": limitless}
        )
    unlimited = Plan.objects.get(slug="unlimited")
    for org in Organisation.objects.filter(account__isnull=True):
        Account.objects.create(org=org, plan=unlimited)


class Migration(migrations.Migration):
    dependencies = [("usage", "0001_initial")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
