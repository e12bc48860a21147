import uuid

from django.db import migrations, models


def give_public_ids(apps, schema_editor):
    """Each answer already stored gets a random id of its own (a field default is computed once per migration)."""
    Answer = apps.get_model("garden", "Answer")
    for answer in Answer.objects.only("pk").iterator():
        Answer.objects.filter(pk=answer.pk).update(public_id=uuid.uuid4())


class Migration(migrations.Migration):
    # Answers are addressed by a random UUID instead of their sequential id, so nobody can read another reader's
    # answers by counting; old numeric links give 404. budget_held marks an answer the local synthesiser wrote
    # because today's Claude budget could not cover it.

    dependencies = [
        ("garden", "0006_hnsw_m12_ef_construction800"),
    ]

    operations = [
        migrations.AddField(
            model_name="answer",
            name="public_id",
            field=models.UUIDField(editable=False, null=True),
        ),
        migrations.RunPython(give_public_ids, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="answer",
            name="public_id",
            field=models.UUIDField(default=uuid.uuid4, editable=False, unique=True),
        ),
        migrations.AddField(
            model_name="answer",
            name="budget_held",
            field=models.BooleanField(
                default=False,
                help_text="Today's Claude budget could not cover this answer: the local synthesiser wrote it.",
            ),
        ),
    ]
