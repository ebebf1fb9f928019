from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0012_passage_previous_turn"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="version",
            field=models.PositiveIntegerField(default=1),
        ),
    ]
