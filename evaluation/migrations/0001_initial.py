"""The golden questions and Verify-all runs, moved from the verifier without touching their data.

Their tables keep the verifier's names (`db_table`), so this migration only tells Django's state that evaluation
now holds them (`verifier.0010` removes them from the verifier's state, again without touching the database);
a fresh database gets the same tables from `verifier.0002`. The content types move too, so that the groups'
permissions (operators' `run_verify_all`) and the admin's history still point at the same rows.
"""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ["goldenquestion", "verifyrun", "verifyrunitem"]


def content_types_to(app_label: str, other: str):
    def move(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType")
        taken = set(content_types.objects.filter(app_label=app_label, model__in=MOVED).values_list("model", flat=True))
        content_types.objects.filter(app_label=other, model__in=set(MOVED) - taken).update(app_label=app_label)

    return move


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("garden", "0014_retrieval_calibration"),
        ("verifier", "0009_spend_purpose_answer"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="GoldenQuestion",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("code", models.CharField(max_length=40, unique=True)),
                        ("category", models.CharField(max_length=30)),
                        ("kind", models.CharField(blank=True, max_length=30)),
                        ("question", models.TextField()),
                        ("expected_articles", django.contrib.postgres.fields.ArrayField(base_field=models.SlugField(max_length=200), blank=True, default=list, size=None)),
                        ("reference_answer", models.TextField(blank=True)),
                        ("outdated_fact", models.TextField(blank=True, help_text="For an 'outdated' question, the superseded fact an answer must not give as current.")),
                        ("active", models.BooleanField(default=True)),
                    ],
                    options={
                        "db_table": "verifier_goldenquestion",
                        "ordering": ["code"],
                    },
                ),
                migrations.CreateModel(
                    name="VerifyRun",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("label", models.CharField(max_length=100)),
                        ("status", models.CharField(choices=[("running", "Running"), ("done", "Done"), ("error", "Failed")], default="running", max_length=10)),
                        ("mode", models.CharField(choices=[("local", "Local judge only"), ("claude", "Claude judge only"), ("cascade", "Panel: local and Claude jurors, Claude tie-breaker")], help_text="The judge mode configured when the run started.", max_length=10)),
                        ("total", models.PositiveIntegerField(default=0)),
                        ("report", models.JSONField(blank=True, default=dict)),
                        ("started_at", models.DateTimeField(auto_now_add=True)),
                        ("finished_at", models.DateTimeField(blank=True, null=True)),
                        ("started_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "db_table": "verifier_verifyrun",
                        "ordering": ["-started_at"],
                        "permissions": [("run_verify_all", "Can start Verify-all runs and read their reports")],
                    },
                ),
                migrations.CreateModel(
                    name="VerifyRunItem",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("status", models.CharField(choices=[("pending", "Pending"), ("done", "Done"), ("error", "Failed")], default="pending", max_length=10)),
                        ("error", models.TextField(blank=True)),
                        ("seconds", models.FloatField(default=0)),
                        ("answers_question", models.BooleanField(blank=True, help_text="Whether the answer states the question's expected fact (`claimcheck.answer_check`), decided when the item finished; empty when the question has no expected answer.", null=True)),
                        ("answer", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="garden.answer")),
                        ("golden", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="+", to="evaluation.goldenquestion")),
                        ("run", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="items", to="evaluation.verifyrun")),
                    ],
                    options={
                        "db_table": "verifier_verifyrunitem",
                        "ordering": ["run", "golden__code"],
                        "constraints": [models.UniqueConstraint(fields=("run", "golden"), name="unique_run_question")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to("evaluation", "verifier"), content_types_to("verifier", "evaluation")),
    ]
