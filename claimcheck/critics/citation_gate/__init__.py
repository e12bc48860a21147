"""The `citation_gate` critic (warn): every citation and quote in the answer is audited against its source.

Three kinds of item are audited, each by its own module, and each item ends verified (at its original
location), corrected or dropped (`items`):

- `[n]` citations (`numbered`): the cited passage must support the text the citation ends, at least half of
  its content words found there and every number verbatim; another source or another place in the same
  article that does corrects the citation.
- Quoted passages (`quotes`): found verbatim or fuzzily, numbers and negations intact, in any source.
- `path:line` citations (`paths`) against `source_tree`: the file inside the tree, the line there, and what
  the citation says (its description, or the code its sentence names) on that line or within a few lines of it.
  The message names each one corrected (to its line) and dropped (why).

The critic passes when nothing is dropped. Pure Python: no Django.
"""

from __future__ import annotations

from typing import Any, Final

from claimcheck.critics.base import Critic, CriticInput, Finding, plural
from claimcheck.critics.citation_gate.items import (
    CORRECTED,
    DROPPED,
    FILE_MISSING,
    FILE_UNREADABLE,
    LINE_MISSING,
    NO_SOURCE_TREE,
    NOTHING_NEARBY,
    OUTSIDE_TREE,
    SUPPORT_THRESHOLD,
    VERIFIED,
    Item,
)
from claimcheck.critics.citation_gate.numbered import audit_numbered
from claimcheck.critics.citation_gate.paths import LINE_RADIUS, audit_paths
from claimcheck.critics.citation_gate.quotes import FUZZY_QUOTE_SCORE, MIN_QUOTE_CHARS, audit_quotes
from claimcheck.terms import Severity

__all__ = [
    "CRITIC",
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
# After the summary, what became of each `path:line` citation that was not verified where it points.
PATH_FINDINGS: Final = " Paths: {findings}."
PATH_CORRECTED: Final = "{cited} is at line {line}"
PATH_DROPPED: Final = "{cited} dropped ({why})"
PATH_MORE: Final = "and {count} more"
MAX_PATH_FINDINGS: Final = 5  # an answer's message stays a line or two; `details["items"]` has them all
DROP_REASONS: Final = {
    FILE_MISSING: "no such file",
    LINE_MISSING: "past the file's end",
    NOTHING_NEARBY: "not on or near that line",
    OUTSIDE_TREE: "outside the source tree",
    NO_SOURCE_TREE: "no source tree to check against",
    FILE_UNREADABLE: "the file cannot be read",
}


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
    ) + _path_findings(items)
    return Finding(passed=counts[DROPPED] == 0, message=message, details=details)


def _path_findings(items: list[Item]) -> str:
    """The `path:line` citations corrected (to which line) and dropped (why), for the message readers see."""
    findings = []
    for item in items:
        if item.kind != "path" or item.status == VERIFIED:
            continue
        cited = item.reference.split(" - ", 1)[0]
        if item.status == CORRECTED and item.corrected_to is not None:
            findings.append(PATH_CORRECTED.format(cited=cited, line=item.corrected_to["line"]))
        else:
            findings.append(PATH_DROPPED.format(cited=cited, why=DROP_REASONS.get(item.reason, item.reason)))
    if not findings:
        return ""
    if len(findings) > MAX_PATH_FINDINGS:
        more = PATH_MORE.format(count=len(findings) - MAX_PATH_FINDINGS)
        findings = [*findings[:MAX_PATH_FINDINGS], more]
    return PATH_FINDINGS.format(findings="; ".join(findings))


CRITIC: Final = Critic(NAME, SEVERITY, audit_citations)
