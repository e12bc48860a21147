"""Queueing and running verifications, and checking arbitrary text against the garden."""

from __future__ import annotations

import contextlib
import datetime
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from garden.citations import strip_citations
from garden.claude_api import claude_config
from garden.errors import UserFacingError
from garden.models import Answer, AnswerSource, Article, Chunk
from garden.retrieval import retrieve
from garden.text import storable
from verifier import claims as claim_splitter
from verifier.budget import DailyBudget
from verifier.critics import BLOCK, ConstraintRules, CriticInput, CriticResult, SourcePassage, run_critics
from verifier.judges.types import Source
from verifier.models import (
    Claim,
    CriticFinding,
    SpendPurpose,
    Verification,
    VerificationStatus,
    Vote,
)
from verifier.panel import CastVote, PanelConfig, PanelOutcome, run_panel
from verifier.terms import UNSURE_RISK, Flag, RiskLabel
from verifier.verdict import Scored, score

logger = logging.getLogger(__name__)

# Advisory-lock namespace for verifications (any constant unique to this use).
LOCK_NAMESPACE = 7401
JUDGE_CRASHED = "The judge could not check this answer. Operators have the details."


def _enqueue(verification_id: int) -> None:
    from verifier.tasks import verify_answer

    try:
        # One quick attempt: with the broker away the answer must not wait for publish retries.
        verify_answer.apply_async((verification_id,), retry=False)
    except Exception:
        # The broker is down: the answer stands, the verification stays pending and is queued again later.
        logger.warning("could not queue verification %s; it stays pending", verification_id, exc_info=True)


def verification_create(*, answer: Answer) -> Verification | None:
    """A pending verification for a real answer; refusals and failed answers have no claims, so get none."""
    if answer.refused or answer.failed:
        return None
    return Verification.objects.get_or_create(answer=answer)[0]


def verification_request(*, answer: Answer) -> Verification | None:
    """A pending verification for the answer, queued once the surrounding transaction commits."""
    verification = verification_create(answer=answer)
    if verification is not None:
        transaction.on_commit(lambda: _enqueue(verification.pk))
    return verification


def verifications_requeue(*, older_than: datetime.timedelta | None = None) -> int:
    """Queue again the verifications left pending (e.g. while Redis was down) and those stuck running for
    longer than a task may live (its message lost with a broker's data); returns how many.

    A verification queued twice is harmless: the second delivery finds it done or being run, and steps aside.
    """
    if older_than is None:
        older_than = datetime.timedelta(seconds=settings.VERIFIER_REQUEUE_AFTER_SECONDS)
    now = timezone.now()
    stuck = datetime.timedelta(seconds=settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"])
    ids = list(
        Verification.objects.filter(
            Q(status=VerificationStatus.PENDING, created_at__lt=now - older_than)
            | Q(status=VerificationStatus.RUNNING, started_at__lt=now - stuck)
        ).values_list("pk", flat=True)
    )
    for verification_id in ids:
        _enqueue(verification_id)
    return len(ids)


def panel_config(purpose: SpendPurpose, mode: str | None = None) -> PanelConfig:
    return PanelConfig(
        mode=mode or settings.VERIFIER_MODE,
        claude=claude_config(),
        juror_model=settings.CLAUDE_JUROR_MODEL,
        tiebreaker_model=settings.CLAUDE_TIEBREAKER_MODEL,
        escalate_below=settings.VERIFIER_ESCALATE_BELOW,
        budget=DailyBudget(purpose),
    )


def answer_sources(answer: Answer) -> tuple[list[Source], dict[int, Chunk]]:
    """The answer's numbered sources, then superseded revisions of the same articles (to spot outdated claims)."""
    given = list(AnswerSource.objects.filter(answer=answer).select_related("chunk").order_by("number"))
    chunks = {s.number: s.chunk for s in given}
    sources = [Source(index=s.number, text=s.chunk.text, superseded=not s.chunk.is_current) for s in given]
    older = Chunk.objects.filter(
        article__in={s.chunk.article_id for s in given}, revision__superseded=True
    ).order_by("article_id", "revision_id", "ordinal")
    number = len(given)
    for chunk in older:
        number += 1
        chunks[number] = chunk
        sources.append(Source(index=number, text=chunk.text, superseded=True))
    return sources, chunks


@dataclass(frozen=True)
class Checked:
    """Text judged by the panel: its claims, the outcome and the scores."""

    claims: list[claim_splitter.Sentence]
    outcome: PanelOutcome
    scored: Scored
    judge_available: bool


def text_check(
    text: str, sources: Sequence[Source], *, purpose: SpendPurpose, mode: str | None = None
) -> Checked:
    """Split `text` into claims and judge them against `sources` (the heart of every verification).

    Each Claude judgement of the panel goes into the daily budget's ledger for `purpose`.
    """
    config = panel_config(purpose, mode)
    claims = claim_splitter.split_claims(text)
    outcome = run_panel(claims, sources, config)
    judge_available = config.mode == "local" or not outcome.local_only
    scored = score(
        [v.status for v in outcome.finals],
        [v.confidence for v in outcome.finals],
        judge_available=judge_available,
    )
    return Checked(claims, outcome, scored, judge_available)


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
    """The critic checks on an answer, against the sources it was given and the whole garden."""
    given = AnswerSource.objects.filter(answer=answer).select_related("chunk__article", "chunk__revision")
    passages = {
        s.number: SourcePassage(
            number=s.number,
            article_slug=s.chunk.article.slug,
            title=s.chunk.article.title,
            text=s.chunk.text,
            article_text=s.chunk.revision.body,
        )
        for s in given
    }
    tree = settings.CRITIC_SOURCE_TREE
    return run_critics(
        CriticInput(
            answer=answer.text,
            sources=passages,
            article_slugs=frozenset(Article.objects.values_list("slug", flat=True)),
            source_tree=Path(tree) if tree else None,
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
    sources, chunks = answer_sources(answer)
    findings = critics_run(answer)
    try:
        checked = text_check(answer.text, sources, purpose=SpendPurpose.VERIFICATION)
    except Exception:
        logger.exception("the judge crashed on verification %s", verification_id)
        Verification.objects.filter(pk=verification_id).update(
            status=VerificationStatus.ERROR,
            error=JUDGE_CRASHED,
            risk_score=UNSURE_RISK,  # as DESIGN scores a check that failed
            risk_label=RiskLabel.UNAVAILABLE,
            finished_at=timezone.now(),
        )
        raise
    _store(verification, checked, chunks, findings, round((time.perf_counter() - began) * 1000))
    return verification


@transaction.atomic
def _store(
    verification: Verification,
    checked: Checked,
    chunks: dict[int, Chunk],
    findings: list[CriticResult],
    latency_ms: int,
) -> None:
    outcome, scored = checked.outcome, checked.scored
    verification.claims.all().delete()
    verification.findings.all().delete()
    CriticFinding.objects.bulk_create(
        CriticFinding(
            verification=verification,
            check_name=f.check,
            severity=f.severity,
            passed=f.passed,
            message=f.message,
            details=f.details,
            error=f.error,
            latency_ms=round(f.latency_ms, 2),
        )
        for f in findings
    )
    verification.blocked = any(not f.passed and f.severity == BLOCK for f in findings)
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
            # An invented quote stays on the judge's vote for editors to see, never as the claim's quote.
            quote = "" if Flag.QUOTE_NOT_FOUND in final.flags else final.quote
            claim.status, claim.quote, claim.confidence = final.status, quote, final.confidence
            claim.source_number = final.source_index
            claim.chunk = chunks.get(final.source_index) if final.source_index else None
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
    verification.mode = settings.VERIFIER_MODE
    verification.verdict = scored.verdict
    verification.risk_score = scored.risk_score
    verification.risk_label = scored.risk_label
    verification.delta_score = scored.delta_score
    verification.confidence = scored.confidence
    verification.judges = len(outcome.judges)
    verification.flags = flags
    verification.local_only = outcome.local_only
    verification.disclosure = outcome.disclosure
    verification.budget_held = outcome.budget_held
    verification.judge_errors = "\n".join(outcome.errors)
    verification.input_tokens, verification.output_tokens = outcome.input_tokens, outcome.output_tokens
    verification.cost_usd = outcome.cost_usd
    verification.latency_ms = latency_ms
    verification.status = VerificationStatus.DONE
    verification.error = ""
    verification.finished_at = timezone.now()
    verification.save()
    if verification.blocked:
        logger.warning(
            "OPERATOR ALERT: answer %s was blocked by the safety check: %s",
            verification.answer_id,
            "; ".join(f.message for f in findings if not f.passed and f.severity == BLOCK),
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


CHECK_MAX_CHARS = 10_000
EMPTY_TEXT = "Please give some text to check."
TEXT_TOO_LONG = "Text to check is limited to {limit:,} characters; this has {length:,}."


class CheckError(UserFacingError):
    """Text that cannot be checked (empty or too long)."""


def garden_check(text: str | None) -> tuple[Checked, list[Chunk]]:
    """Fact-check any text against the garden: retrieve passages for it, then judge its claims against them.

    `[n]` markers are removed first: in arbitrary text they do not refer to the retrieved passages.
    """
    text = strip_citations(storable(text or ""))
    if not text:
        raise CheckError(EMPTY_TEXT)
    if len(text) > CHECK_MAX_CHARS:
        raise CheckError(TEXT_TOO_LONG.format(limit=CHECK_MAX_CHARS, length=len(text)))
    found = retrieve(text)
    chunks_by_id = Chunk.objects.select_related("article").in_bulk([hit.chunk_id for hit in found.sources])
    chunks = [chunks_by_id[hit.chunk_id] for hit in found.sources]
    sources = [Source(index=number, text=chunk.text) for number, chunk in enumerate(chunks, start=1)]
    return text_check(text, sources, purpose=SpendPurpose.CHECK), chunks
