"""Reads of verifications shaped for pages and the API."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Prefetch

from verifier.models import Claim, CriticFinding, Verification, Vote
from verifier.terms import ClaimStatus


@dataclass(frozen=True)
class VerdictSummary:
    verification: Verification
    claims: list[Claim]
    counts: list[tuple[str, str, int]]  # (status, label, count) for every status, in severity order
    sources_used: list[int]  # source numbers supporting at least one verified claim
    failed_checks: list[CriticFinding]


def verification_for_answer(answer_id: int) -> Verification | None:
    return (
        Verification.objects.prefetch_related(
            Prefetch(
                "claims",
                Claim.objects.select_related("chunk__article").prefetch_related(
                    Prefetch("votes", Vote.objects.order_by("id"))
                ),
            )
        )
        .filter(answer_id=answer_id)
        .first()
    )


def verdict_summary(verification: Verification) -> VerdictSummary:
    claims = list(verification.claims.all())
    counted = Counter(c.status for c in claims if c.is_claim)
    counts = [(status.value, status.label, counted.get(status.value, 0)) for status in ClaimStatus]
    used = sorted({c.source_number for c in claims if c.status == ClaimStatus.VERIFIED and c.source_number})
    failed = [f for f in verification.findings.all() if not f.passed]
    return VerdictSummary(verification, claims, counts, used, failed)
