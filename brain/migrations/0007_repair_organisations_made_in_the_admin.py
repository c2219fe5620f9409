"""Organisations added in the admin before it went through ``create_organisation`` have no
default category (nothing could be saved to them) and no switches: both are made here, as the
service makes them. Their account is made where it is first needed (``usage.metering``)."""

from django.db import migrations

DEFAULT_SLUG = "general"  # brain.models.Category.DEFAULT_SLUG at the time of writing


def repair(apps, schema_editor):
    Organisation = apps.get_model("brain", "Organisation")
    Category = apps.get_model("brain", "Category")
    Features = apps.get_model("brain", "Features")
    without_category = Organisation.objects.exclude(pk__in=Category.objects.filter(slug=DEFAULT_SLUG).values("org"))
    Category.objects.bulk_create([Category(org=org, slug=DEFAULT_SLUG, name="General") for org in without_category])
    without_features = Organisation.objects.exclude(pk__in=Features.objects.values("org"))
    Features.objects.bulk_create([Features(org=org) for org in without_features])


class Migration(migrations.Migration):
    dependencies = [
        ("brain", "0006_organisation_time_zone"),
    ]

    operations = [migrations.RunPython(repair, migrations.RunPython.noop)]
