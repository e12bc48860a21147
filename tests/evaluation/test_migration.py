"""Evaluation's models were the verifier's: an existing database moves them to evaluation without losing a row,
and operators keep their permission to run Verify-all."""

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from evaluation.models import GoldenQuestion, VerifyRun, VerifyRunItem

VERIFIER_BEFORE = ("verifier", "0009_spend_purpose_answer")  # the last migration before evaluation's
BEFORE = [VERIFIER_BEFORE, ("evaluation", None)]


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_a_run_stored_by_the_verifier_is_evaluations_after_the_upgrade() -> None:
    permission = Permission.objects.get(codename="run_verify_all")
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        old = executor.loader.project_state(VERIFIER_BEFORE).apps
        answer = old.get_model("garden", "Answer").objects.create(
            question=old.get_model("garden", "Question").objects.create(text="How long is the viaduct?"),
            text="The viaduct is 196 m long [1].",
        )
        golden = old.get_model("verifier", "GoldenQuestion").objects.create(
            code="g002", category="single_fact", question="How long is the viaduct?"
        )
        run = old.get_model("verifier", "VerifyRun").objects.create(
            label="before the upgrade", status="done", mode="local", total=1, report={"questions": 1}
        )
        old.get_model("verifier", "VerifyRunItem").objects.create(
            run=run, golden=golden, answer=answer, status="done"
        )
        # Before the upgrade the permission was the verifier's, as the code of then asks for it.
        assert Permission.objects.get(pk=permission.pk).content_type.app_label == "verifier"
    finally:
        migrate_to_latest()

    moved = VerifyRun.objects.get(pk=run.pk)
    assert (moved.label, moved.status, moved.report) == ("before the upgrade", "done", {"questions": 1})
    [item] = VerifyRunItem.objects.filter(run=moved)
    assert item.answer_id == answer.pk and item.golden == GoldenQuestion.objects.get(code="g002")
    # The same permission row, so the groups that held it hold it still.
    assert Permission.objects.get(pk=permission.pk).content_type.app_label == "evaluation"
