"""Reads of verifications shaped for pages and the API."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Prefetch, prefetch_related_objects

from claimcheck.terms import ClaimStatus
from garden.models import Answer, Conversation
from garden.readers import Reader
from verifier.models import Claim, Verification, Vote


@dataclass(frozen=True)
class VerdictSummary:
    claims: list[Claim]
    counts: dict[str, int]  # claims by status, every status, in severity order
    sources_used: list[int]  # source numbers supporting at least one verified claim


def verification_for_answer(answer: Answer) -> Verification | None:
    """The answer's verification, or None, with all its verdict shows: claims with their votes and their
    passages' articles, and the critics' findings. Four queries however many claims; what they load is kept
    on `answer.verification`, so the answer page and its polled verdict read it without querying again."""
    prefetch_related_objects(
        [answer],
        "verification__findings",
        Prefetch(
            "verification__claims", Claim.objects.select_related("passage__article", "passage__revision")
        ),
        Prefetch("verification__claims__votes", Vote.objects.order_by("id")),
    )
    return getattr(answer, "verification", None)


# Whether an answer answers its question, as every surface names it (`answers_label`).
ANSWERS_QUESTION = "Answers the question"
DOES_NOT_ANSWER = "Does not answer the question"


def answers_label(answers: bool) -> str:
    return ANSWERS_QUESTION if answers else DOES_NOT_ANSWER


def answers_question(answer: Answer) -> bool:
    """Whether `answer` answers its question, the one rule every face shows: it is not refused, not an
    abstention and not failed (`Answer.answers_question`), and its verification, once finished, did not decide
    otherwise (a grounded answer may say only what is near the question). Reads `answer.verification` when
    loaded or cached."""
    verification: Verification | None = getattr(answer, "verification", None)
    decided_not = (
        verification is not None and verification.finished and verification.answers_question is False
    )
    return answer.answers_question and not decided_not


def conversation_labels(
    conversation: Conversation, reader: Reader, *, through: int | None = None
) -> list[tuple[str, str]]:
    """Each checked turn's verification status and risk label (blank until it has one), in one query: of the
    turns `reader` may see only (`Answer.objects.readable`), as a turn hidden from them says nothing of its check;
    with `through`, of the turns up to that one (an answer's page shows no later turn)."""
    checks = Verification.objects.filter(
        answer__question__conversation=conversation, answer__in=Answer.objects.readable(reader)
    )
    if through is not None:
        checks = checks.filter(answer__question__turn__lte=through)
    return list(checks.order_by("answer__question__turn").values_list("status", "risk_label"))


def verdict_summary(verification: Verification) -> VerdictSummary:
    claims = list(verification.claims.all())
    counted = Counter(c.status for c in claims if c.is_claim)
    counts = {status.value: counted.get(status.value, 0) for status in ClaimStatus}
    used = sorted({c.source_number for c in claims if c.status == ClaimStatus.VERIFIED and c.source_number})
    return VerdictSummary(claims, counts, used)
