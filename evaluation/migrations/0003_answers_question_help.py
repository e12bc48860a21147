"""The help text names the package that scores answers by its new name (`claimcheck.answer_scoring`); no column
changes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0002_run_and_question_audience"),
    ]

    operations = [
        migrations.AlterField(
            model_name="verifyrunitem",
            name="answers_question",
            field=models.BooleanField(
                blank=True,
                help_text=(
                    "Whether the answer states the question's expected fact (`claimcheck.answer_scoring`), decided "
                    "when the item finished; empty when the question has no expected answer."
                ),
                null=True,
            ),
        ),
    ]
