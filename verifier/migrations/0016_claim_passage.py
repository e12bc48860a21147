"""A claim's source passage is called `passage`, as `garden.Passage` is; its column keeps its name."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("garden", "0023_passage"),
        ("verifier", "0015_reader_marks"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(model_name="claim", old_name="chunk", new_name="passage"),
                migrations.AlterField(
                    model_name="claim",
                    name="passage",
                    field=models.ForeignKey(
                        blank=True,
                        db_column="chunk_id",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="garden.passage",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
