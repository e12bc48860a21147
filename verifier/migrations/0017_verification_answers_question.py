"""Whether an answer answers its question, as its verification decided (empty for those checked before)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0016_claim_passage"),
    ]

    operations = [
        migrations.AddField(
            model_name="verification",
            name="answers_question",
            field=models.BooleanField(
                blank=True,
                help_text="Whether the answer answers its question: its claims say what it takes as given and give the kind of answer it asks for (the Claude juror's word when it ran, else the local judge's); empty until the judge has decided.",
                null=True,
            ),
        ),
    ]
