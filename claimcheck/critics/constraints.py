"""The `constraints` critic (warn): the operator's rules for answers.

Rules (`ConstraintRules`): cite at least `min_citations` distinct sources (numbers that exist among the
answer's sources; 0 disables), stay within `min_chars`/`max_chars` (the answer's length, surrounding
whitespace excluded; None disables) and use none of `forbidden_phrases` (case-insensitive, whitespace runs
treated as one space). Pure Python.
"""

from __future__ import annotations

import re
from typing import Any, Final

from claimcheck.critics.base import Critic, CriticInput, Finding, citation_markers, plural
from claimcheck.terms import Severity

__all__ = ["CRITIC", "NAME", "SEVERITY", "check_constraints"]

NAME: Final = "constraints"
SEVERITY: Final = Severity.WARN

PASSED_MESSAGE: Final = "The answer meets the operator's rules."
FAILED_MESSAGE: Final = "The answer breaks the operator's rules: {reasons}."
TOO_FEW_CITATIONS: Final = "it cites {value} (at least {limit} required)"
TOO_LONG: Final = "it is {value} long (at most {limit} allowed)"
TOO_SHORT: Final = "it is {value} long (at least {limit} required)"
FORBIDDEN: Final = "it uses forbidden wording ({phrases})"

MIN_CITATIONS: Final = "min_citations"
MAX_CHARS: Final = "max_chars"
MIN_CHARS: Final = "min_chars"
FORBIDDEN_PHRASES: Final = "forbidden_phrases"


def check_constraints(critic_input: CriticInput) -> Finding:
    """Measure the answer against each enabled rule; details list every failed rule with its value."""
    rules = critic_input.rules
    answer = critic_input.answer
    cited = sorted(
        {n for _, _, numbers in citation_markers(answer) for n in numbers if n in critic_input.sources}
    )
    length = len(answer.strip())
    folded = _fold(answer)
    used = [phrase for phrase in rules.forbidden_phrases if _fold(phrase) and _fold(phrase) in folded]

    failed: list[dict[str, Any]] = []
    reasons: list[str] = []
    if rules.min_citations > 0 and len(cited) < rules.min_citations:
        failed.append({"rule": MIN_CITATIONS, "limit": rules.min_citations, "value": len(cited)})
        reasons.append(
            TOO_FEW_CITATIONS.format(value=plural(len(cited), "source"), limit=rules.min_citations)
        )
    if rules.max_chars is not None and length > rules.max_chars:
        failed.append({"rule": MAX_CHARS, "limit": rules.max_chars, "value": length})
        reasons.append(TOO_LONG.format(value=plural(length, "character"), limit=rules.max_chars))
    if rules.min_chars is not None and length < rules.min_chars:
        failed.append({"rule": MIN_CHARS, "limit": rules.min_chars, "value": length})
        reasons.append(TOO_SHORT.format(value=plural(length, "character"), limit=rules.min_chars))
    if used:
        failed.append({"rule": FORBIDDEN_PHRASES, "limit": list(rules.forbidden_phrases), "value": used})
        reasons.append(FORBIDDEN.format(phrases=", ".join(f"“{phrase}”" for phrase in used)))

    details = {"failed": failed, "measured": {"citations": cited, "chars": length}}
    if not failed:
        return Finding(passed=True, message=PASSED_MESSAGE, details=details)
    return Finding(passed=False, message=FAILED_MESSAGE.format(reasons="; ".join(reasons)), details=details)


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


CRITIC: Final = Critic(NAME, SEVERITY, check_constraints)
