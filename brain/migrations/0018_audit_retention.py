import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("brain", "0017_single_sign_on"),
    ]

    operations = [
        migrations.AddField(
            model_name="organisation",
            name="audit_days",
            field=models.PositiveSmallIntegerField(
                default=365,
                help_text="Days the audit trail keeps a record before the nightly purge deletes it (30 to 3650).",
                validators=[
                    django.core.validators.MinValueValidator(30),
                    django.core.validators.MaxValueValidator(3650),
                ],
            ),
        ),
    ]
