"""Webhook secrets sealed at rest like credentials (connectors.sealing), and the hashes of accepted
webhook bodies that catch replays (connectors.hooks)."""

from typing import Any

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

import connectors.models
from connectors.sealing import seal_secret, unseal_secret


def seal_existing(apps: Any, schema_editor: Any) -> None:
    Connection = apps.get_model("connectors", "Connection")
    for connection in Connection.objects.only("pk", "webhook_secret").iterator():
        Connection.objects.filter(pk=connection.pk).update(sealed_webhook_secret=seal_secret(connection.webhook_secret))


def unseal_existing(apps: Any, schema_editor: Any) -> None:
    Connection = apps.get_model("connectors", "Connection")
    for connection in Connection.objects.only("pk", "sealed_webhook_secret").iterator():
        Connection.objects.filter(pk=connection.pk).update(
            webhook_secret=unseal_secret(connection.sealed_webhook_secret)
        )


class Migration(migrations.Migration):
    dependencies = [("connectors", "0002_slack_audiences")]

    operations = [
        migrations.AddField(model_name="connection", name="sealed_webhook_secret", field=models.TextField(default="")),
        migrations.RunPython(seal_existing, unseal_existing),
        migrations.RemoveField(model_name="connection", name="webhook_secret"),
        migrations.AlterField(
            model_name="connection",
            name="sealed_webhook_secret",
            field=models.TextField(default=connectors.models._sealed_webhook_secret),
        ),
        migrations.CreateModel(
            name="WebhookDelivery",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("digest", models.CharField(max_length=64)),
                ("received_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "connection",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="connectors.connection",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["connection", "received_at"], name="webhook_delivery_age")],
                "constraints": [
                    models.UniqueConstraint(fields=("connection", "digest"), name="webhook_delivery_unique_digest")
                ],
            },
        ),
    ]
