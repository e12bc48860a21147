"""The verdict on an answer from its claims' statuses: delta score, risk score and label, as DESIGN defines them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DELTA = {
    "verified": 0.0,
    "inferred": 0.2,
    "unverified": 0.5,
    "outdated": 0.6,
    "misattributed": 0.8,
    "contradicted": 1.0,
}
BAD = frozenset({"unverified", "misattributed", "contradicted"})
FLAGGED = frozenset({"unverified", "contradicted", "misattributed", "outdated"})
CONFIDENT = 80
# The risk score when the judge cannot tell: a mixed verdict, an unsure one, or no judge at all.
UNSURE_RISK = 50

LABEL_GROUNDED = "✓"
LABEL_MIXED = "~"
LABEL_HALLUCINATING = "⚠"
LABEL_UNAVAILABLE = "?"
LABEL_TEXT = {
    LABEL_GROUNDED: "grounded",
    LABEL_MIXED: "mixed or unsure",
    LABEL_HALLUCINATING: "likely hallucination",
    LABEL_UNAVAILABLE: "judge unavailable",
}


@dataclass(frozen=True)
class Scored:
    verdict: str
    delta_score: float
    confidence: int
    risk_score: int
    risk_label: str


def verdict_of(statuses: Sequence[str]) -> str:
    """grounded: over 80% verified and none contradicted; hallucinating: half or more bad, or any contradicted."""
    if not statuses:
        return "no_claims"
    total = len(statuses)
    if "contradicted" in statuses or sum(s in BAD for s in statuses) * 2 >= total:
        return "hallucinating"
    if sum(s == "verified" for s in statuses) / total > 0.8:
        return "grounded"
    return "mixed"


def score(statuses: Sequence[str], confidences: Sequence[float], *, judge_available: bool = True) -> Scored:
    """Delta score (mean claim delta), confidence 0-100 (mean claim confidence), risk score and label.

    Risk: 100 - confidence when grounded with confidence >= 80 (label ✓); confidence when hallucinating
    (at least 51, label ⚠); 50 when mixed, unsure, or the judge is unavailable (labels ~ and ?).
    """
    verdict = verdict_of(statuses)
    delta = round(sum(DELTA[s] for s in statuses) / len(statuses), 3) if statuses else 0.0
    confidence = round(100 * sum(confidences) / len(confidences)) if confidences else 0
    if not judge_available:
        return Scored(verdict, delta, confidence, UNSURE_RISK, LABEL_UNAVAILABLE)
    if verdict == "grounded" and confidence >= CONFIDENT:
        return Scored(verdict, delta, confidence, 100 - confidence, LABEL_GROUNDED)
    if verdict == "hallucinating":
        return Scored(verdict, delta, confidence, max(confidence, 51), LABEL_HALLUCINATING)
    return Scored(verdict, delta, confidence, UNSURE_RISK, LABEL_MIXED)
