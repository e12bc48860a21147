"""A claim's passage is kept in the column `passage_id`, as the field is named (garden 0028 renamed the table)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("garden", "0028_passage_table"),
        ("verifier", "0020_apitoken_scopes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="claim",
            name="passage",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="garden.passage",
            ),
        ),
    ]
