"""The verdict on an answer from its claims' statuses (and whether they answer its question): delta score, risk
score and label, by the rules each function states."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from claimcheck.terms import CONFIDENT, DELTA, NOT_SUPPORTED, UNSURE_RISK, ClaimStatus, RiskLabel, Verdict


@dataclass(frozen=True)
class Scored:
    verdict: Verdict
    delta_score: float
    confidence: int
    risk_score: int
    risk_label: RiskLabel


# What the compact line says, after the label, of an answer that does not answer its question.
DOES_NOT_ANSWER = "does not answer"


def compact_line(
    *,
    risk_label: str,
    risk_score: int,
    judges: int,
    local_only: bool,
    flags: int,
    answers_question: bool | None = None,
) -> str:
    """The compact line, e.g. `[Hall: ⚠ · 78/100 · 2 judges · 3 flags]`, or `... · local judge · ...` when the
    local judge's verdict is the one shown; `[Hall: ~ · does not answer · 50/100 · ...]` when the answer does
    not answer its question (None: not decided, as for a text checked without one)."""
    judged = "local judge" if local_only and judges else f"{judges} judge{'s' * (judges != 1)}"
    flagged = f"{flags} flag{'s' if flags != 1 else ''}"
    label = f"{risk_label} · {DOES_NOT_ANSWER}" if answers_question is False else risk_label
    return f"[Hall: {label} · {risk_score}/100 · {judged} · {flagged}]"


def verdict_of(statuses: Sequence[str]) -> Verdict:
    """grounded: over 80% verified and none contradicted; hallucinating: half or more not supported, or any
    contradicted."""
    if not statuses:
        return Verdict.NO_CLAIMS
    total = len(statuses)
    if ClaimStatus.CONTRADICTED in statuses or sum(s in NOT_SUPPORTED for s in statuses) * 2 >= total:
        return Verdict.HALLUCINATING
    if sum(s == ClaimStatus.VERIFIED for s in statuses) / total > 0.8:
        return Verdict.GROUNDED
    return Verdict.MIXED


def score(
    statuses: Sequence[str], confidences: Sequence[float], *, answers_question: bool | None = None
) -> Scored:
    """Delta score (mean claim delta), confidence 0-100 (mean claim confidence), risk score and label, from
    whichever judge gave the statuses: the local judge's verdict alone is a verdict too (the page discloses that
    the stronger judge did not run). `?` belongs only to a check in which no judge gave a verdict at all (a
    verification that failed), which is scored where it fails.

    Risk: 100 - confidence when grounded with confidence >= 80 (label ✓); confidence when hallucinating
    (at least 51, label ⚠); 50 when mixed or unsure (label ~). An answer that does not answer its question
    (`answers_question` False) is never ✓, however grounded its claims: it is 50, `~`, and its verdict stays
    what its claims' statuses make it.
    """
    verdict = verdict_of(statuses)
    delta = round(sum(DELTA[ClaimStatus(s)] for s in statuses) / len(statuses), 3) if statuses else 0.0
    confidence = round(100 * sum(confidences) / len(confidences)) if confidences else 0
    if verdict == Verdict.GROUNDED and confidence >= CONFIDENT and answers_question is not False:
        return Scored(verdict, delta, confidence, 100 - confidence, RiskLabel.GROUNDED)
    if verdict == Verdict.HALLUCINATING:
        return Scored(verdict, delta, confidence, max(confidence, 51), RiskLabel.HALLUCINATING)
    return Scored(verdict, delta, confidence, UNSURE_RISK, RiskLabel.MIXED)
