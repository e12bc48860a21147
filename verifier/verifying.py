"""Running one verification: pending -> running -> done | error.

The critics and the judges' panel check the answer against the sources it was given (and whether it answers the
question it was written for), and the claims, votes, critic findings and verdict are stored in one transaction. A
run is safe to repeat: an advisory lock keeps a duplicate delivery out, and a finished verification is left alone.
Queueing it is `verifier.queueing`'s job.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from claimcheck.critics import ConstraintRules, CriticInput, CriticResult, run_critics
from claimcheck.panel import CastVote
from claimcheck.quote_gate import quote_passed
from claimcheck.terms import LOCAL_JUDGE, UNSURE_RISK, JudgeMode, RiskLabel, Severity
from garden.models import Answer, Article, Passage
from garden.readers import reader_of
from verifier.budget import Spender, anonymous_local, spending_for
from verifier.checking import Checked, text_check
from verifier.judge_parameters import judge_parameters_use
from verifier.models import Claim, CriticFinding, SpendPurpose, Verification, VerificationStatus, Vote
from verifier.source_tree import critic_source_tree
from verifier.sources import answer_passages, answer_question, answer_sources

logger = logging.getLogger(__name__)

# Advisory-lock namespace for verifications (any constant unique to this use).
LOCK_NAMESPACE = 7401
JUDGE_CRASHED = "The judge could not check this answer. Operators have the details."


def verification_start(verification_id: int) -> Verification | None:
    """Mark a verification running; None when it is gone or already done (so a re-delivery does nothing)."""
    with transaction.atomic():
        verification = Verification.objects.select_for_update().filter(pk=verification_id).first()
        if verification is None or verification.status == VerificationStatus.DONE:
            return None
        verification.status = VerificationStatus.RUNNING
        verification.started_at = timezone.now()
        verification.attempts += 1
        verification.save(update_fields=["status", "started_at", "attempts"])
        return verification


@contextlib.contextmanager
def _exclusive(verification_id: int) -> Iterator[bool]:
    """A PostgreSQL advisory lock on the verification: True if we hold it. It dies with a killed worker's
    connection, so a redelivered task can take over, while a duplicate delivery of a live one steps aside."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_NAMESPACE, verification_id])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_NAMESPACE, verification_id])


def verification_run(*, verification_id: int) -> Verification | None:
    """Judge an answer's claims and store claims, votes and the verdict: pending -> running -> done | error.

    Idempotent: a finished verification is not redone, one being run elsewhere is left to that run, and a
    half-done one (its worker killed) is redone whole. Returns None when there was nothing to do.
    """
    with _exclusive(verification_id) as held:
        return _run(verification_id) if held else None


def critics_run(answer: Answer) -> list[CriticResult]:
    """The critics run on an answer, against the sources it was given and the garden as its asker may read
    it: a note withheld, or of an audience not the asker's, "does not exist" word for word as a slug no note
    has, so a question cannot learn from the check which slugs are there."""
    readable = Article.objects.readable(reader_of(answer.question.asked_by))
    return run_critics(
        CriticInput(
            answer=answer.text,
            sources=answer_passages(answer),
            article_slugs=frozenset(readable.values_list("slug", flat=True)),
            source_tree=critic_source_tree(),
            rules=ConstraintRules(
                min_citations=settings.CRITIC_MIN_CITATIONS,
                max_chars=settings.CRITIC_MAX_CHARS,
                min_chars=settings.CRITIC_MIN_CHARS or None,
                forbidden_phrases=tuple(settings.CRITIC_FORBIDDEN_PHRASES),
            ),
        )
    )


def _run(verification_id: int) -> Verification | None:
    verification = verification_start(verification_id)
    if verification is None:
        return None
    began = time.perf_counter()
    answer = verification.answer
    sources, passages = answer_sources(answer)
    findings = critics_run(answer)
    judge_parameters = judge_parameters_use()
    # An anonymous visitor's answer is judged on their allowance, and with none by the local judge alone.
    anonymous = answer.question.anonymous
    mode = JudgeMode.LOCAL if anonymous and anonymous_local() else JudgeMode(settings.VERIFIER_MODE)
    try:
        # The check is spent for the reader who asked (the token they asked with is not kept on the question).
        with spending_for(Spender(user_id=answer.question.asked_by_id)):
            checked = text_check(
                answer.text,
                sources,
                purpose=SpendPurpose.VERIFICATION,
                mode=mode,
                anonymous=anonymous,
                question=answer_question(answer),
            )
    except Exception:
        logger.exception("the judge crashed on verification %s", verification_id)
        Verification.objects.filter(pk=verification_id).update(
            status=VerificationStatus.ERROR,
            error=JUDGE_CRASHED,
            risk_score=UNSURE_RISK,  # a check that failed is unsure: 50, `?` (claimcheck.verdict.score)
            risk_label=RiskLabel.UNAVAILABLE,
            finished_at=timezone.now(),
        )
        raise
    latency_ms = round((time.perf_counter() - began) * 1000)
    _store(verification, checked, passages, findings, latency_ms, judge_parameters, mode)
    return verification


@transaction.atomic
def _store(
    verification: Verification,
    checked: Checked,
    passages: dict[int, Passage],
    findings: list[CriticResult],
    latency_ms: int,
    judge_parameters: int | None,
    mode: JudgeMode,
) -> None:
    outcome, scored = checked.outcome, checked.scored
    verification.claims.all().delete()
    verification.findings.all().delete()
    CriticFinding.objects.bulk_create(
        CriticFinding(
            verification=verification,
            critic_name=f.critic,
            severity=f.severity,
            passed=f.passed,
            message=f.message,
            details=f.details,
            error=f.error,
            latency_ms=round(f.latency_ms, 2),
        )
        for f in findings
    )
    verification.blocked = any(not f.passed and f.severity == Severity.BLOCK for f in findings)
    finals = iter(zip(outcome.finals, outcome.votes, outcome.escalated, strict=True))
    flags = 0
    for ordinal, piece in enumerate(checked.claims):
        claim = Claim(
            verification=verification,
            ordinal=ordinal,
            text=piece.text,
            start=piece.start,
            end=piece.end,
            is_claim=piece.is_claim,
        )
        cast: list[CastVote] = []
        if piece.is_claim:
            final, cast, escalated = next(finals)
            # A quote the gate turned down (invented, or saying too little of the claim) stays on the judge's vote
            # for editors to see, never as the claim's quote.
            quote = final.quote if quote_passed(final.flags) else ""
            claim.status, claim.quote, claim.confidence = final.status, quote, final.confidence
            claim.source_number = final.source_index
            claim.passage = passages.get(final.source_index) if final.source_index else None
            claim.flags, claim.escalated = list(final.flags), escalated
            flags += len(final.flags)
        claim.save()
        Vote.objects.bulk_create(
            Vote(
                claim=claim,
                judge=c.judge,
                role=c.role,
                status=c.vote.status,
                quote=c.vote.quote,
                source_number=c.vote.source_index,
                confidence=c.vote.confidence,
                flags=list(c.vote.flags),
            )
            for c in cast
        )
    verification.mode = mode
    verification.verdict = scored.verdict
    verification.risk_score = scored.risk_score
    verification.risk_label = scored.risk_label
    verification.delta_score = scored.delta_score
    verification.confidence = scored.confidence
    verification.answers_question = outcome.answers_question
    verification.judges = len(outcome.judges)
    verification.flags = flags
    verification.local_only = outcome.local_only
    verification.disclosure = outcome.disclosure
    verification.budget_held = outcome.budget_held
    verification.judge_errors = "\n".join(outcome.errors)
    verification.input_tokens, verification.output_tokens = outcome.input_tokens, outcome.output_tokens
    verification.cost_usd = outcome.cost_usd
    verification.latency_ms = latency_ms
    # The local judge's version is recorded when it voted (always, unless the panel failed before it did).
    verification.judge_parameters_id = judge_parameters if LOCAL_JUDGE in outcome.judges else None
    verification.status = VerificationStatus.DONE
    verification.error = ""
    verification.finished_at = timezone.now()
    verification.save()
    if verification.blocked:
        logger.warning(
            "OPERATOR ALERT: answer %s was blocked by the safety check: %s",
            verification.answer_id,
            "; ".join(f.message for f in findings if not f.passed and f.severity == Severity.BLOCK),
        )
    if scored.delta_score > settings.VERIFIER_ALERT_DELTA:
        logger.warning(
            "OPERATOR ALERT: answer %s has delta score %.2f (threshold %.2f), verdict %s, %s",
            verification.answer_id,
            scored.delta_score,
            settings.VERIFIER_ALERT_DELTA,
            scored.verdict,
            verification.compact,
        )
