"""Each passage is searched in its note's language (`Passage.language`, a text-search configuration): its search
vector is stemmed by it. Every passage stored before was English, so it keeps `english` and its vector as it was;
PostgreSQL 16 cannot change a generated column's expression, so the column and its index are made again."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models

import garden.models


class Migration(migrations.Migration):
    dependencies = [
        ("garden", "0026_served_model"),
    ]

    operations = [
        migrations.AddField(
            model_name="passage",
            name="language",
            field=garden.models.TextSearchConfigField(default="english"),
        ),
        migrations.RemoveIndex(model_name="passage", name="chunk_search_gin"),
        migrations.RemoveField(model_name="passage", name="search_vector"),
        migrations.AddField(
            model_name="passage",
            name="search_vector",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.contrib.postgres.search.SearchVector("text", config=models.F("language")),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="passage",
            index=django.contrib.postgres.indexes.GinIndex(
                condition=models.Q(("is_current", True)), fields=["search_vector"], name="chunk_search_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="passage",
            index=models.Index(condition=models.Q(("is_current", True)), fields=["language"], name="chunk_language"),
        ),
        # A new column has no statistics: without them the planner takes one language for a rare one and reads
        # every passage in it, not the GIN index of the question's words.
        migrations.RunSQL("ANALYZE garden_chunk", migrations.RunSQL.noop),
    ]
