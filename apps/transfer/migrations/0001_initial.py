"""BatchJob arrives from the memories app (memories 0026) into this app's state only: its table,
memories_batchjob, was made by memories 0018 and keeps its name, its rows and its index."""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("access", "0005_apitoken_trusted"),
        ("memories", "0026_batchjob_moves_to_transfer"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="BatchJob",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                default=uuid.uuid4,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("door", models.CharField(max_length=20)),
                        ("origin", models.JSONField(blank=True, db_default={}, default=dict)),
                        ("on_duplicate", models.CharField(default="report", max_length=20)),
                        ("items", models.JSONField()),
                        ("total", models.PositiveIntegerField()),
                        (
                            "state",
                            models.CharField(
                                choices=[
                                    ("queued", "Queued"),
                                    ("running", "Running"),
                                    ("done", "Done"),
                                    ("failed", "Failed"),
                                ],
                                default="queued",
                                max_length=10,
                            ),
                        ),
                        ("done", models.PositiveIntegerField(default=0)),
                        ("claim", models.UUIDField(blank=True, null=True)),
                        ("created", models.PositiveIntegerField(default=0)),
                        ("already_stored", models.PositiveIntegerField(default=0)),
                        ("results", models.JSONField(blank=True, null=True)),
                        ("errors", models.JSONField(blank=True, default=dict)),
                        ("queued_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("started_at", models.DateTimeField(blank=True, null=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "actor_connection",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="access.oauthconnection",
                            ),
                        ),
                        (
                            "actor_token",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="access.apitoken",
                            ),
                        ),
                        (
                            "actor_user",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "namespace",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="batch_jobs",
                                to="memories.namespace",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "memories_batchjob",
                        "indexes": [
                            models.Index(
                                condition=models.Q(("state__in", ["queued", "running"])),
                                fields=["queued_at"],
                                name="batchjob_pending",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
