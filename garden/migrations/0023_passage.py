"""`Chunk` is called `Passage`, as on every page and in the API; its table and columns keep their names."""

import django.db.models.deletion
from django.db import migrations, models


def content_type_renamed(old: str, new: str):
    def rename(apps, schema_editor):
        # What Django does for a RenameModel, so the admin's permissions and history follow the model.
        ContentType = apps.get_model("contenttypes", "ContentType")
        ContentType.objects.using(schema_editor.connection.alias).filter(
            app_label="garden", model=old
        ).update(model=new)

    return rename


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("garden", "0022_calibration_source"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterModelTable(name="chunk", table="garden_chunk"),
                migrations.RenameModel(old_name="Chunk", new_name="Passage"),
                migrations.AlterField(
                    model_name="passage",
                    name="article",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="passages",
                        to="garden.article",
                    ),
                ),
                migrations.AlterField(
                    model_name="passage",
                    name="revision",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="passages",
                        to="garden.articlerevision",
                    ),
                ),
                migrations.RenameField(model_name="answersource", old_name="chunk", new_name="passage"),
                migrations.AlterField(
                    model_name="answersource",
                    name="passage",
                    field=models.ForeignKey(
                        db_column="chunk_id",
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="garden.passage",
                    ),
                ),
                migrations.RenameField(
                    model_name="retrievalcalibration", old_name="chunks", new_name="passages"
                ),
                migrations.AlterField(
                    model_name="retrievalcalibration",
                    name="passages",
                    field=models.PositiveIntegerField(
                        db_column="chunks",
                        default=0,
                        help_text="Current passages of the garden when it was fitted.",
                    ),
                ),
                migrations.AlterField(
                    model_name="retrievalcalibration",
                    name="embedded_by",
                    field=models.CharField(
                        help_text="The embedder it was fitted with (Passage.embedded_by).", max_length=40
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(
            content_type_renamed("chunk", "passage"), content_type_renamed("passage", "chunk")
        ),
    ]
