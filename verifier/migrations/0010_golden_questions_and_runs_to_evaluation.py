"""The golden questions and Verify-all runs are evaluation's now (`evaluation.0001_initial`): they leave the
verifier's state only; their tables stay as they are, under their names, for evaluation's models."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("verifier", "0009_spend_purpose_answer"),
        ("evaluation", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="verifyrunitem", name="golden"),
                migrations.RemoveField(model_name="verifyrun", name="started_by"),
                migrations.RemoveField(model_name="verifyrunitem", name="run"),
                migrations.RemoveField(model_name="verifyrunitem", name="answer"),
                migrations.DeleteModel(name="GoldenQuestion"),
                migrations.DeleteModel(name="VerifyRun"),
                migrations.DeleteModel(name="VerifyRunItem"),
            ],
            database_operations=[],
        ),
    ]
