"""A real Celery worker on the real Redis broker checks answers: pending -> running -> done, never twice."""

import os

import pytest
from django.db import transaction

from claimcheck.terms import RiskLabel
from garden.models import Answer, AnswerSource, Article, Generator, Question, Retrieval
from garden.services import revision_create
from tests.celery_worker import Worker, wait_for
from verifier.models import Verification, VerificationStatus
from verifier.queueing import verification_request
from verifier.verifying import verification_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # a real worker process

SOURCE = "The Eiffel Tower opened in Paris in 1889. It is 330 metres tall."


def answer_with_source(text: str) -> Answer:
    article = Article.objects.create(slug="eiffel", title="Eiffel Tower")
    revision = revision_create(article=article, title="Eiffel Tower", body=SOURCE)
    question = Question.objects.create(
        text="When did the tower open?",
        preflight_domain="factual",
        preflight_risk="HIGH",
        preflight_suggestion="-",
    )
    Retrieval.objects.create(question=question)
    answer = Answer.objects.create(question=question, text=text, generator=Generator.EXTRACTIVE)
    AnswerSource.objects.create(answer=answer, number=1, passage=revision.passages.get(), score=0.9)
    return answer


def test_a_worker_checks_the_answer_and_the_verdict_arrives(celery_worker):
    with transaction.atomic():
        answer = answer_with_source(
            "The Eiffel Tower opened in Madrid in 1923 [1]. It is 330 metres tall [1]."
        )
        verification = verification_request(answer=answer)
    assert verification is not None

    wait_for(lambda: Verification.objects.get(pk=verification.pk).finished)
    done = Verification.objects.get(pk=verification.pk)
    assert done.status == VerificationStatus.DONE and done.attempts == 1
    claims = list(done.claims.order_by("ordinal"))
    assert [c.status for c in claims] == ["contradicted", "verified"] or claims[0].status == "unverified"
    assert {"wrong-place", "wrong-year"} <= set(claims[0].flags)
    assert claims[1].quote == "It is 330 metres tall."
    assert done.verdict == "hallucinating"
    assert (
        done.risk_label == RiskLabel.HALLUCINATING
        and "only the weaker local judge" in done.disclosure.lower()
    )


def test_a_finished_verification_is_not_redone(celery_worker):
    with transaction.atomic():
        answer = answer_with_source("The Eiffel Tower opened in Paris in 1889 [1].")
        verification = verification_request(answer=answer)
    assert verification is not None
    wait_for(lambda: Verification.objects.get(pk=verification.pk).finished)
    claim_ids = list(Verification.objects.get(pk=verification.pk).claims.values_list("pk", flat=True))

    assert verification_run(verification_id=verification.pk) is None
    again = Verification.objects.get(pk=verification.pk)
    assert again.attempts == 1 and list(again.claims.values_list("pk", flat=True)) == claim_ids


def test_verify_all_runs_as_a_celery_group_on_the_worker(celery_worker, tmp_path):
    from evaluation.models import RunStatus, VerifyRun
    from evaluation.starting import verify_run_start

    Article.objects.create(slug="placeholder", title="placeholder")
    answer_with_source("unused")  # the Eiffel article, so in-scope questions retrieve something
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        "- {id: t1, category: single_fact, question: 'When did the Eiffel Tower open?', expected_articles: [eiffel]}\n"
        "- {id: t2, category: out_of_scope, question: 'How do I bake sourdough bread?', expected_articles: []}\n"
    )
    with transaction.atomic():
        run = verify_run_start(label="worker", golden_file=golden)
    wait_for(lambda: VerifyRun.objects.get(pk=run.pk).status != RunStatus.RUNNING, seconds=240)
    report = VerifyRun.objects.get(pk=run.pk).report
    assert report["questions"] == 2 and report["errors"] == 0
    assert report["out_of_scope_refused"] == 1.0 and report["in_scope_refused"] == 0.0
    assert report["claims"] >= 1


def test_the_worker_yields_the_cores_to_the_web(settings):
    """Readers' questions come first on shared cores: the worker runs WORKER_NICENESS below this process (the
    setting's default, which the other tests' workers do not use)."""
    assert settings.WORKER_NICENESS > 0
    worker = Worker({"WORKER_NICENESS": str(settings.WORKER_NICENESS)}, name="niced")
    try:
        worker.start()
        assert worker.process is not None
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(19, ours + settings.WORKER_NICENESS)
    finally:
        worker.stop()
