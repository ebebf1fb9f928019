import django.db.models.manager
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0022_recheck_marks"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="memory",
            options={
                "base_manager_name": "every_state",
                "ordering": ["-created_at"],
                "verbose_name_plural": "memories",
            },
        ),
        migrations.AlterModelManagers(
            name="memory",
            managers=[
                ("objects", django.db.models.manager.Manager()),
                ("every_state", django.db.models.manager.Manager()),
            ],
        ),
        migrations.AddField(
            model_name="memory",
            name="review",
            field=models.CharField(
                choices=[
                    ("approved", "Approved"),
                    ("pending", "Pending"),
                    ("rejected", "Rejected"),
                ],
                db_default="approved",
                default="approved",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="memory",
            name="review_reason",
            field=models.CharField(blank=True, db_default="", default="", max_length=500),
        ),
        migrations.AddField(
            model_name="memory",
            name="risk",
            field=models.JSONField(blank=True, db_default=[], default=list),
        ),
        # Namespaces that exist before the upgrade keep today's behaviour ("off") until an
        # owner changes it; namespaces made afterwards start at "flagged".
        migrations.AddField(
            model_name="namespace",
            name="review",
            field=models.CharField(
                choices=[("off", "Off"), ("flagged", "Flagged"), ("all", "All")],
                default="off",
                max_length=10,
            ),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="namespace",
            name="review",
            field=models.CharField(
                choices=[("off", "Off"), ("flagged", "Flagged"), ("all", "All")],
                default="flagged",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="namespace",
            name="secrets",
            field=models.CharField(
                choices=[("refuse", "Refuse"), ("redact", "Redact")],
                default="refuse",
                max_length=10,
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.CheckConstraint(
                condition=models.Q(("review__in", ["approved", "pending", "rejected"])),
                name="memory_review_valid",
            ),
        ),
    ]
