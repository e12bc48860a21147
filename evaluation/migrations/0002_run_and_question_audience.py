"""Verify-all per audience: the audience a run and a golden question are asked as, and what each item was."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="goldenquestion",
            name="audience",
            field=models.CharField(
                blank=True,
                help_text="The audience it is asked as in every run, whatever the run's; empty: the run's audience.",
                max_length=100,
            ),
        ),
        migrations.AddField(
            model_name="verifyrun",
            name="audience",
            field=models.CharField(
                blank=True,
                help_text="The audience its questions were asked as (a question naming its own is asked as that one); empty: the default audience, as a visitor who is not signed in. `evaluation.audiences`.",
                max_length=100,
            ),
        ),
        migrations.AddField(
            model_name="verifyrunitem",
            name="asked_as",
            field=models.CharField(
                blank=True,
                help_text="The audience the question was asked as; empty: the default one.",
                max_length=100,
            ),
        ),
        migrations.AddField(
            model_name="verifyrunitem",
            name="beyond_audience",
            field=models.BooleanField(
                default=False,
                help_text="Whether every note expected to answer it is of an audience it was not asked as: another audience could answer it, so it is out of scope for this run (it must be refused). Decided when the item finished.",
            ),
        ),
    ]
