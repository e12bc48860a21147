"""What the citation gate reports for each audited item: its outcome, the reason for it, and the item itself.

Every auditor ends each item verified (at its original location), corrected or dropped, and says why in the
words below (the `reason` of each item in the critic's `details["items"]`). Pure Python: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

# Cited text counts as supported when at least this share of its content words (and every number) is found.
SUPPORT_THRESHOLD: Final = 0.5

VERIFIED: Final = "verified"
CORRECTED: Final = "corrected"
DROPPED: Final = "dropped"

SUPPORTED: Final = "supported"
SUPPORTED_JOINTLY: Final = "supported-jointly"
NOTHING_TO_CHECK: Final = "nothing-to-check"
FOUND_IN_OTHER_SOURCE: Final = "found-in-other-source"
FOUND_ELSEWHERE_IN_ARTICLE: Final = "found-elsewhere-in-article"
NO_SUCH_SOURCE: Final = "no-such-source"
ARTICLE_MISSING: Final = "article-missing"
UNSUPPORTED: Final = "unsupported"
QUOTE_FOUND: Final = "quote-found"
QUOTE_NOT_FOUND: Final = "quote-not-found"
LINE_MATCHES: Final = "line-matches"
FOUND_NEARBY: Final = "found-nearby"
NOTHING_NEARBY: Final = "nothing-nearby"
NO_SOURCE_TREE: Final = "no-source-tree"
OUTSIDE_TREE: Final = "outside-tree"
FILE_MISSING: Final = "file-missing"
FILE_UNREADABLE: Final = "file-unreadable"
LINE_MISSING: Final = "line-missing"


@dataclass
class Item:
    """One audited citation, quote or path, and its fate."""

    kind: str
    reference: str
    start: int
    end: int
    status: str
    reason: str
    fabricated: bool = False
    corrected_to: dict[str, Any] | None = None
    score: float | None = None
    found_in: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "kind": self.kind,
            "reference": self.reference,
            "start": self.start,
            "end": self.end,
            "status": self.status,
            "reason": self.reason,
            "fabricated": self.fabricated,
        }
        if self.corrected_to is not None:
            item["corrected_to"] = self.corrected_to
        if self.found_in is not None:
            item["found_in"] = self.found_in
        if self.score is not None:
            item["score"] = round(self.score, 3)
        return item
