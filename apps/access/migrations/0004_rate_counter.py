from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("access", "0003_oauth_connection"),
    ]

    operations = [
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                ("key", models.CharField(max_length=200, primary_key=True, serialize=False)),
                ("count", models.PositiveIntegerField(default=0)),
                ("expires_at", models.DateTimeField(db_index=True)),
            ],
        ),
    ]
