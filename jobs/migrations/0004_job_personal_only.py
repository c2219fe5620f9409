from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0003_run_audience_and_write_tools"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="personal_only",
            field=models.BooleanField(
                default=False,
                help_text="Made or changed over a connection limited to personal memories: its runs are limited the same way.",
            ),
        ),
    ]
