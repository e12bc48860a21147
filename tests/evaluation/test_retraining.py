"""The judge learns from its editors: versions, retraining with reviews, the two acceptance checks, rollback."""

from __future__ import annotations

import re
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from claimcheck.judges.local import params_install
from claimcheck.terms import ClaimStatus, Flag
from evaluation import retraining, tasks
from evaluation.calibration.editors import MIN_REVIEWS, TOO_FEW_REVIEWS, EditorReview, held_out
from evaluation.retraining import (
    ABANDONED,
    ABANDONED_AFTER,
    ALREADY_RUNNING,
    NOT_QUEUED,
    RetrainError,
    judge_parameters_activate,
    judge_retrain,
    judge_retrain_start,
)
from garden.models import Passage
from tests.factories import answer_for, login, verify_station_answer
from verifier import judge_parameters
from verifier.models import Claim, Decision, JudgeParameters, ParametersSource, ParametersStatus, Verification
from verifier.queueing import verification_create
from verifier.review import review_record
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

EVAL_DIR = Path(settings.JUDGE_EVAL_DIR)
CACHE_DIR = Path(settings.JUDGE_CALIBRATION_CACHE)
# Retraining is accepted against the public benchmarks, which live beside the checkout, not in it.
needs_benchmarks = pytest.mark.skipif(
    not (EVAL_DIR / "summedits_dev.jsonl").exists(),
    reason=f"the benchmark data is not at {EVAL_DIR}: set JUDGE_EVAL_DIR to the folder of summedits_dev.jsonl",
)
# Both retrainings need the judge's features of every benchmark item (minutes to compute, then read from the
# cache): in one test process, one after the other, the second reads what the first computed, rather than a
# second process waiting on the cache's lock meanwhile (`make test` deals tests out with `--dist loadgroup`).
benchmark_features = pytest.mark.xdist_group("judge_benchmark_features")
# The judge's systematic mistake: one adjective rephrased by a synonym trips its edit rule (a novel word in an
# otherwise well-matched claim), and the claim is called unverified with novel content.
SYNONYMS = {"original": "first", "main": "principal", "first": "earliest", "only": "sole", "small": "little"}


@pytest.fixture(autouse=True)
def committed_params_afterwards() -> Iterator[None]:
    """Each test's versions are rolled back with its database: the process goes back to params.json too."""
    yield
    params_install(None)
    judge_parameters._installed_id = None


def _stored_version(version: int, threshold: float) -> JudgeParameters:
    shipped = JudgeParameters.objects.get(version=1)
    return JudgeParameters.objects.create(
        version=version,
        source=ParametersSource.RETRAINED,
        status=ParametersStatus.KEPT,
        params={**shipped.params, "threshold": threshold, "verified_threshold": threshold},
    )


def _judged(claim: str, passage: Passage) -> Claim:
    verification = verification_create(answer=answer_for(f"{claim[:-1]} [1].", passage))
    assert verification is not None
    verification_run(verification_id=verification.pk)
    return Claim.objects.get(verification=verification, is_claim=True)


def _synonym_claims(count: int) -> list[Claim]:
    """Claims that rephrase one adjective of a sample passage's sentence, which the judge calls unverified."""
    found: list[Claim] = []
    for passage in Passage.objects.filter(is_current=True).order_by("article__slug", "ordinal"):
        for sentence in re.split(r"(?<=[.!?])\s+", passage.text):
            if not 40 < len(sentence) < 200 or not sentence.endswith(".") or "*" in sentence:
                continue
            word = next((w for w in SYNONYMS if re.search(rf"\b{w}\b", sentence)), None)
            if word is None:
                continue
            claim = _judged(re.sub(rf"\b{word}\b", SYNONYMS[word], sentence, count=1), passage)
            if claim.status == ClaimStatus.UNVERIFIED and Flag.NOVEL_CONTENT in claim.flags:
                found.append(claim)
            if len(found) == count:
                return found
    raise AssertionError(f"only {len(found)} synonym claims found")


def test_a_verification_records_the_active_version() -> None:
    assert JudgeParameters.objects.get(active=True).version == 1
    verification = verify_station_answer()
    assert verification.judge_parameters is not None
    assert verification.judge_parameters.version == 1


def test_a_new_active_version_judges_at_once_and_a_rollback_restores_the_old() -> None:
    _stored_version(2, threshold=0.999)  # no claim reaches it: everything is unverified
    judge_parameters_activate(version=2)
    strict = verify_station_answer()
    assert strict.judge_parameters is not None and strict.judge_parameters.version == 2
    assert strict.claims.get(is_claim=True).status == ClaimStatus.UNVERIFIED

    judge_parameters_activate(version=1)
    restored = verify_station_answer()
    assert restored.judge_parameters is not None and restored.judge_parameters.version == 1
    assert restored.claims.get(is_claim=True).status == ClaimStatus.VERIFIED
    assert list(JudgeParameters.objects.filter(active=True).values_list("version", flat=True)) == [1]


def test_a_refused_version_cannot_be_made_active() -> None:
    JudgeParameters.objects.create(
        version=2, source=ParametersSource.RETRAINED, status=ParametersStatus.REFUSED
    )
    with pytest.raises(RetrainError):
        judge_parameters_activate(version=2)
    assert JudgeParameters.objects.get(active=True).version == 1


def test_too_few_reviews_to_retrain() -> None:
    claim = verify_station_answer().claims.get(is_claim=True)
    review_record(claim=claim, reviewer=None, decision=Decision.JUDGE_RIGHT)
    with pytest.raises(RetrainError) as raised:
        judge_retrain_start(user_id=None)
    assert raised.value.message == TOO_FEW_REVIEWS.format(count=1, minimum=MIN_REVIEWS)
    assert not JudgeParameters.objects.filter(version=2).exists()


def test_operators_see_versions_and_may_roll_back_others_may_not(client: Client) -> None:
    _stored_version(2, threshold=0.5)
    judge_parameters_activate(version=2)
    login(client, "editor")
    assert client.post(reverse("dashboard:judge-activate", args=[1])).status_code == 403
    assert client.post(reverse("dashboard:judge-retrain")).status_code == 403
    client.logout()

    login(client, "operator")
    page = client.get(reverse("dashboard:logs")).content.decode()
    assert "Retrain the judge with editors' reviews" in page
    assert "Roll back to version 1" in page
    response = client.post(reverse("dashboard:judge-activate", args=[1]), follow=True)
    assert "Version 1 of the judge" in response.content.decode()
    assert JudgeParameters.objects.get(active=True).version == 1
    response = client.post(reverse("dashboard:judge-retrain"), follow=True)
    assert (
        TOO_FEW_REVIEWS.format(count=0, minimum=MIN_REVIEWS).replace("'", "&#x27;")
        in response.content.decode()
    )
    row = client.get(reverse("dashboard:judge-version", args=[2]), headers={"HX-Request": "true"})
    assert 'id="judge-2"' in row.content.decode() and "<h1>" not in row.content.decode()


@pytest.mark.slow
@needs_benchmarks
@benchmark_features
def test_retraining_with_editors_fixes_the_synonym_mistake_on_held_out_reviews(
    django_capture_on_commit_callbacks: pytest.FixtureRequest,
) -> None:
    """40 'judge wrong' reviews correct the synonym mistake; the version retrained on half of them is kept."""
    claims = _synonym_claims(40)
    for claim in claims:
        review_record(
            claim=claim, reviewer=None, decision=Decision.JUDGE_WRONG, correct_status=ClaimStatus.VERIFIED
        )
    with django_capture_on_commit_callbacks(execute=False):  # type: ignore[operator]
        version = judge_retrain_start(user_id=None)
    result = judge_retrain(parameters_id=version.pk, eval_dir=EVAL_DIR, cache_dir=CACHE_DIR)

    assert result is not None
    report = result.report
    assert result.status == ParametersStatus.KEPT, report["reason"]
    assert result.active and JudgeParameters.objects.get(active=True).pk == result.pk
    assert report["held_out_reviews"] == sum(held_out(c.text) for c in claims) > 10
    assert report["agreement_before"] == 0.0  # the judge got every one wrong
    assert report["agreement_after"] >= 0.5
    assert (
        report["lodo_held"] and report["lodo_with_reviews"]["mean_balanced_accuracy"] >= report["lodo_floor"]
    )

    # The product path: the held-out claims judged again by the new active version.
    fixed = 0
    held = [c for c in claims if held_out(c.text)]
    for claim in held:
        assert claim.passage is not None
        again = _judged(claim.text.replace(" [1]", ""), claim.passage)
        assert again.verification.judge_parameters_id == result.pk
        fixed += again.status in {ClaimStatus.VERIFIED, ClaimStatus.INFERRED}
    assert fixed >= len(held) / 2


@pytest.mark.slow
@needs_benchmarks
@benchmark_features
def test_retraining_is_refused_when_agreement_with_editors_does_not_rise(
    django_capture_on_commit_callbacks: pytest.FixtureRequest,
) -> None:
    """Editors who agree with the judge on every claim leave nothing to gain: the new version is refused."""
    for claim in _synonym_claims(24):
        review_record(claim=claim, reviewer=None, decision=Decision.JUDGE_RIGHT)
    with django_capture_on_commit_callbacks(execute=False):  # type: ignore[operator]
        version = judge_retrain_start(user_id=None)
    result = judge_retrain(parameters_id=version.pk, eval_dir=EVAL_DIR, cache_dir=CACHE_DIR)

    assert result is not None and result.status == ParametersStatus.REFUSED
    assert not result.active and JudgeParameters.objects.get(active=True).version == 1
    assert result.report["agreement_before"] == 1.0
    assert not result.report["agreement_rose"]
    assert result.report["reason"].startswith("Refused: agreement with editors")
    assert Verification.objects.exists()


def test_the_shipped_version_judges_with_the_committed_file_not_a_stale_copy() -> None:
    """An upgrade that recalibrates params.json takes effect on a database migrated before it."""
    JudgeParameters.objects.filter(version=1).update(params={"threshold": 0.999})
    verification = verify_station_answer()
    assert verification.judge_parameters is not None and verification.judge_parameters.version == 1
    assert verification.claims.get(is_claim=True).status == ClaimStatus.VERIFIED


def _enough_reviews(monkeypatch: pytest.MonkeyPatch) -> None:
    reviews = [EditorReview(n, "A claim.", "A passage.", True) for n in range(MIN_REVIEWS)]
    monkeypatch.setattr(retraining, "editor_reviews", lambda: reviews)


def test_a_retraining_the_queue_cannot_take_says_so_at_once(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: pytest.FixtureRequest
) -> None:
    _enough_reviews(monkeypatch)

    def broker_away(*args: object, **kwargs: object) -> None:
        raise ConnectionRefusedError("[Errno 111] Connection refused")

    monkeypatch.setattr(tasks.judge_retrain, "apply_async", broker_away)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        version = judge_retrain_start(user_id=None)
    version.refresh_from_db()
    assert version.status == ParametersStatus.ERROR and version.report["reason"] == NOT_QUEUED
    assert JudgeParameters.objects.get(active=True).version == 1


def test_a_retraining_lost_with_its_worker_blocks_the_next_only_until_its_time_limit(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: pytest.FixtureRequest
) -> None:
    _enough_reviews(monkeypatch)
    lost = JudgeParameters.objects.create(version=2, source=ParametersSource.RETRAINED)
    with pytest.raises(RetrainError) as raised:
        judge_retrain_start(user_id=None)
    assert raised.value.message == ALREADY_RUNNING

    JudgeParameters.objects.filter(pk=lost.pk).update(created_at=timezone.now() - ABANDONED_AFTER)
    with django_capture_on_commit_callbacks(execute=False):  # type: ignore[operator]
        version = judge_retrain_start(user_id=None)
    lost.refresh_from_db()
    assert lost.status == ParametersStatus.ERROR and lost.report["reason"] == ABANDONED
    assert version.version == 3 and version.status == ParametersStatus.RUNNING


def test_make_calibrate_with_too_few_reviews_says_so_and_succeeds() -> None:
    out = StringIO()
    call_command("calibrate_judge", stdout=out)
    assert out.getvalue().strip() == TOO_FEW_REVIEWS.format(count=0, minimum=MIN_REVIEWS)
    assert not JudgeParameters.objects.filter(version=2).exists()
