"""The `citation_gate` check (warn): every citation and quote in the answer is audited against its source.

Three kinds of item are audited, each by its own module, and each item ends verified (at its original
location), corrected or dropped (`items`):

- `[n]` citations (`numbered`): the cited passage must support the text the citation ends, at least half of
  its content words found there and every number verbatim; another source or another place in the same
  article that does corrects the citation.
- Quoted passages (`quotes`): found verbatim or fuzzily, numbers and negations intact, in any source.
- `path:line - description` citations (`paths`) against `source_tree`: the file inside the tree, the line
  there, and the description on that line or within a few lines of it.

The check passes when nothing is dropped. Pure Python: no Django.
"""

from __future__ import annotations

from typing import Any, Final

from claimcheck.critics.base import Critic, CriticInput, Finding, plural
from claimcheck.critics.citation_gate.items import CORRECTED, DROPPED, SUPPORT_THRESHOLD, VERIFIED
from claimcheck.critics.citation_gate.numbered import audit_numbered
from claimcheck.critics.citation_gate.paths import LINE_RADIUS, audit_paths
from claimcheck.critics.citation_gate.quotes import FUZZY_QUOTE_SCORE, MIN_QUOTE_CHARS, audit_quotes
from claimcheck.terms import Severity

__all__ = [
    "CHECK",
    "FUZZY_QUOTE_SCORE",
    "LINE_RADIUS",
    "MIN_QUOTE_CHARS",
    "NAME",
    "SEVERITY",
    "SUPPORT_THRESHOLD",
    "audit_citations",
]

NAME: Final = "citation_gate"
SEVERITY: Final = Severity.WARN

NOTHING_MESSAGE: Final = "The answer has no citations or quotes to audit."
SUMMARY_MESSAGE: Final = "{total}: {verified} verified at original location, {corrected} corrected, {dropped} dropped; {fabrications} caught."


def audit_citations(critic_input: CriticInput) -> Finding:
    """Audit every citation and quote of the answer; the summary and each item's fate go in `details`."""
    answer = critic_input.answer
    items = [
        *audit_numbered(critic_input),
        *audit_quotes(answer, critic_input.sources, critic_input.article_slugs),
        *audit_paths(answer, critic_input.source_tree),
    ]
    items.sort(key=lambda item: (item.start, item.end))
    counts = {
        status: sum(item.status == status for item in items) for status in (VERIFIED, CORRECTED, DROPPED)
    }
    fabrications = sum(item.fabricated for item in items)
    details: dict[str, Any] = {
        "total": len(items),
        "verified": counts[VERIFIED],
        "corrected": counts[CORRECTED],
        "dropped": counts[DROPPED],
        "fabrications_caught": fabrications,
        "items": [item.as_dict() for item in items],
    }
    if not items:
        return Finding(passed=True, message=NOTHING_MESSAGE, details=details)
    message = SUMMARY_MESSAGE.format(
        total=plural(len(items), "citation"),
        verified=counts[VERIFIED],
        corrected=counts[CORRECTED],
        dropped=counts[DROPPED],
        fabrications=plural(fabrications, "fabrication"),
    )
    return Finding(passed=counts[DROPPED] == 0, message=message, details=details)


CHECK: Final = Critic(NAME, SEVERITY, audit_citations)
