"""The editors' review queue: flagged claims and those readers reported wrong, riskiest first, decisions, and the
judge's agreement with editors."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, Count, Exists, IntegerField, OuterRef, Q, QuerySet, Value, When

from claimcheck.terms import FLAGGED, ClaimStatus
from garden.errors import UserFacingError
from garden.models import Answer
from garden.readers import ANONYMOUS, Reader
from garden.selectors import texts_shown
from verifier.models import Claim, ClaimReport, Decision, Review, VerificationStatus

WRONG_NEEDS_STATUS = "Say what the correct status is when the judge was wrong."
NOTE_NEEDED = "Write a note, or choose 'judge right' or 'judge wrong'."
NOTE_TOO_LONG = "A note is at most {limit:,} characters; this one has {length:,}. Nothing was recorded."


class ReviewError(UserFacingError):
    """A decision that cannot be recorded as given."""


@dataclass(frozen=True)
class QueueFilters:
    status: str = ""
    topic: str = ""
    since: datetime.date | None = None
    until: datetime.date | None = None
    reviewed: bool = False
    reported: bool = False  # only the claims a reader reported wrong


def claims_flagged(filters: QueueFilters = QueueFilters(), reader: Reader = ANONYMOUS) -> QuerySet[Claim]:
    """Claims of finished verifications of answers `reader` may see (an editor reviews their own audiences'
    answers) that the judge flagged or a reader reported wrong, riskiest answer first, then the most severe
    status, with their readers' reports (`claim.reports`, oldest first) loaded."""
    reported = Exists(ClaimReport.objects.filter(claim=OuterRef("pk")))
    claims = (
        Claim.objects.filter(
            Q(status__in=FLAGGED) | reported,
            is_claim=True,
            verification__status=VerificationStatus.DONE,
            verification__answer__in=Answer.objects.readable(reader),
        )
        .select_related("verification__answer__question", "passage__article", "passage__revision")
        .prefetch_related("reports")
        .annotate(
            reviewed=Exists(Review.objects.filter(claim=OuterRef("pk")).exclude(decision=Decision.NOTE))
        )
    )
    if filters.reported:
        claims = claims.filter(reported)
    if filters.status in FLAGGED:
        claims = claims.filter(status=filters.status)
    if filters.topic:
        claims = claims.filter(verification__answer__question__retrieval__topics__slug=filters.topic)
    if filters.since:
        claims = claims.filter(verification__created_at__date__gte=filters.since)
    if filters.until:
        claims = claims.filter(verification__created_at__date__lte=filters.until)
    if not filters.reviewed:
        claims = claims.filter(reviewed=False)
    severity = {ClaimStatus.CONTRADICTED: 4, ClaimStatus.MISATTRIBUTED: 3, ClaimStatus.OUTDATED: 2}
    order = Case(
        *(When(status=s, then=Value(v)) for s, v in severity.items()),
        default=Value(1),
        output_field=IntegerField(),
    )
    return (
        claims.annotate(severity=order).order_by("-verification__risk_score", "-severity", "-pk").distinct()
    )


def claims_shown(claims: list[Claim], reader: Reader) -> list[Claim]:
    """`claims` (of `claims_flagged`, passages loaded), each with its judge's quote and its passage's text as
    `reader` is shown them on the reader pages (`quote_shown`, `passage_shown`: a link or embed of a note of an
    audience not theirs names nothing, `garden.selectors.texts_shown`). One query however many."""
    texts: list[tuple[int | None, str]] = []
    for claim in claims:
        article_id = claim.passage.article_id if claim.passage else None
        texts += [(article_id, claim.quote), (article_id, claim.passage.text if claim.passage else "")]
    shown = iter(texts_shown(texts, reader))
    for claim in claims:
        claim.quote_shown, claim.passage_shown = next(shown), next(shown)  # type: ignore[attr-defined]
    return claims


def review_record(
    *,
    claim: Claim,
    reviewer: AbstractBaseUser | AnonymousUser | None,
    decision: str,
    correct_status: str = "",
    note: str = "",
) -> Review:
    """Store an editor's decision (or a note) on a claim."""
    note = note.replace("\x00", "").strip()
    if decision == Decision.JUDGE_WRONG and correct_status not in set(ClaimStatus):
        raise ReviewError(WRONG_NEEDS_STATUS)
    if decision == Decision.NOTE and not note:
        raise ReviewError(NOTE_NEEDED)
    if decision not in Decision.values:
        raise ReviewError(NOTE_NEEDED)
    if len(note) > settings.REVIEW_NOTE_MAX_CHARS:
        raise ReviewError(NOTE_TOO_LONG.format(limit=settings.REVIEW_NOTE_MAX_CHARS, length=len(note)))
    return Review.objects.create(
        claim=claim,
        reviewer_id=reviewer.pk if reviewer else None,
        decision=decision,
        judged_status=claim.status,
        correct_status=correct_status if decision == Decision.JUDGE_WRONG else "",
        note=note,
    )


def agreement_rates() -> dict[str, dict[str, float | int | None]]:
    """How often editors agreed with the judge, overall ("all") and per judged status."""
    rows = (
        Review.objects.exclude(decision=Decision.NOTE)
        .values("judged_status")
        .annotate(
            right=Count("pk", filter=Q(decision=Decision.JUDGE_RIGHT)),
            wrong=Count("pk", filter=Q(decision=Decision.JUDGE_WRONG)),
        )
    )
    rates: dict[str, dict[str, float | int | None]] = {}
    total_right = total_wrong = 0
    for row in rows:
        right, wrong = row["right"], row["wrong"]
        total_right, total_wrong = total_right + right, total_wrong + wrong
        rates[row["judged_status"]] = {"right": right, "wrong": wrong, "rate": right / (right + wrong)}
    decided = total_right + total_wrong
    rates["all"] = {
        "right": total_right,
        "wrong": total_wrong,
        "rate": total_right / decided if decided else None,
    }
    return rates
