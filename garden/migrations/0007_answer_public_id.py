import uuid

import django.contrib.postgres.functions
from django.db import migrations, models


class Migration(migrations.Migration):
    # Answers are addressed by a random UUID instead of their sequential id, so nobody can read another reader's
    # answers by counting; old numeric links give 404. The column's default, gen_random_uuid(), is evaluated
    # for each row, so every answer already stored gets an id of its own. budget_held marks an answer the local
    # synthesiser wrote because today's Claude budget could not cover it.

    dependencies = [
        ("garden", "0006_hnsw_m12_ef_construction800"),
    ]

    operations = [
        migrations.AddField(
            model_name="answer",
            name="public_id",
            field=models.UUIDField(
                db_default=django.contrib.postgres.functions.RandomUUID(),
                default=uuid.uuid4,
                editable=False,
                unique=True,
            ),
        ),
        migrations.AddField(
            model_name="answer",
            name="budget_held",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text="Today's Claude budget could not cover this answer: the local synthesiser wrote it.",
            ),
        ),
    ]
