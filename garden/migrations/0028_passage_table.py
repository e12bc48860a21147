"""The passages' table, its indexes, its constraint and the columns naming it say "passage", as the model and the
pages do (0023 renamed the model only). Every step renames in place: no row, vector or index is rebuilt; only the
foreign keys of the renamed columns are made again, which reads their tables once."""

import django.db.models.deletion
from django.db import migrations, models

# Its primary key's sequence follows the table, so that nothing in the schema keeps the old word; IF EXISTS because
# a database made by hand may have named it otherwise.
SEQUENCE_RENAMED = "ALTER SEQUENCE IF EXISTS garden_chunk_id_seq RENAME TO garden_passage_id_seq"
SEQUENCE_RESTORED = "ALTER SEQUENCE IF EXISTS garden_passage_id_seq RENAME TO garden_chunk_id_seq"


class Migration(migrations.Migration):
    dependencies = [
        ("garden", "0027_passage_language"),
    ]

    operations = [
        migrations.AlterModelTable(name="passage", table="garden_passage"),
        migrations.RunSQL(SEQUENCE_RENAMED, SEQUENCE_RESTORED),
        migrations.RenameIndex(
            model_name="passage", old_name="chunk_embedding_hnsw", new_name="passage_embedding_hnsw"
        ),
        migrations.RenameIndex(
            model_name="passage", old_name="chunk_search_gin", new_name="passage_search_gin"
        ),
        migrations.RenameIndex(model_name="passage", old_name="chunk_language", new_name="passage_language"),
        # Django has no operation renaming a constraint; PostgreSQL renames its index with it.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE garden_passage RENAME CONSTRAINT unique_chunk_ordinal TO unique_passage_ordinal",
                    "ALTER TABLE garden_passage RENAME CONSTRAINT unique_passage_ordinal TO unique_chunk_ordinal",
                ),
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="passage", name="unique_chunk_ordinal"),
                migrations.AddConstraint(
                    model_name="passage",
                    constraint=models.UniqueConstraint(
                        fields=("revision", "ordinal"), name="unique_passage_ordinal"
                    ),
                ),
            ],
        ),
        migrations.AlterField(
            model_name="answersource",
            name="passage",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="garden.passage"
            ),
        ),
        migrations.AlterField(
            model_name="retrievalcalibration",
            name="passages",
            field=models.PositiveIntegerField(
                default=0, help_text="Current passages of the garden when it was fitted."
            ),
        ),
    ]
