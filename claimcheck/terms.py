"""The engine's vocabulary, defined once: claim statuses and their delta scores, verdicts, risk labels, the
flags a judge or a gate puts on a claim, the panel's modes and roles, and the critics' severities (see
docs/architecture.md, "Checking an answer", and docs/guide.md).

The models, both judges, the verdict, the review queue, the quote gate, the templates and the API all read these
names from here. Pure Python: no Django (the models turn these into field choices with `choices`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Final


class ClaimStatus(StrEnum):
    VERIFIED = "verified"
    INFERRED = "inferred"
    UNVERIFIED = "unverified"
    OUTDATED = "outdated"
    MISATTRIBUTED = "misattributed"
    CONTRADICTED = "contradicted"

    @property
    def label(self) -> str:
        return self.value.capitalize()


# How far each status is from "verified", 0 to 1; an answer's delta score is the mean over its claims.
DELTA: Final[Mapping[ClaimStatus, float]] = {
    ClaimStatus.VERIFIED: 0.0,
    ClaimStatus.INFERRED: 0.2,
    ClaimStatus.UNVERIFIED: 0.5,
    ClaimStatus.OUTDATED: 0.6,
    ClaimStatus.MISATTRIBUTED: 0.8,
    ClaimStatus.CONTRADICTED: 1.0,
}
# Statuses under which a claim is not supported by its sources: they count against an answer's verdict.
NOT_SUPPORTED: Final = frozenset(
    {ClaimStatus.UNVERIFIED, ClaimStatus.MISATTRIBUTED, ClaimStatus.CONTRADICTED}
)
# Statuses that put a claim in the editors' review queue (not supported, or supported only by an old revision).
FLAGGED: Final = (
    ClaimStatus.UNVERIFIED,
    ClaimStatus.CONTRADICTED,
    ClaimStatus.MISATTRIBUTED,
    ClaimStatus.OUTDATED,
)


class Verdict(StrEnum):
    GROUNDED = "grounded"
    MIXED = "mixed"
    HALLUCINATING = "hallucinating"
    NO_CLAIMS = "no_claims"

    @property
    def label(self) -> str:
        return "No checkable claims" if self is Verdict.NO_CLAIMS else self.value.capitalize()


class RiskLabel(StrEnum):
    """The one-character label a reader sees first, always shown with its words (never colour alone)."""

    GROUNDED = "✓"
    MIXED = "~"
    HALLUCINATING = "⚠"
    UNAVAILABLE = "?"

    @property
    def text(self) -> str:
        return _LABEL_TEXT[self]

    @property
    def css_class(self) -> str:
        return self.name.lower()


_LABEL_TEXT: Final = {
    RiskLabel.GROUNDED: "grounded",
    RiskLabel.MIXED: "mixed or unsure",
    RiskLabel.HALLUCINATING: "likely hallucination",
    RiskLabel.UNAVAILABLE: "judge unavailable",
}
# A grounded verdict needs at least this confidence (0-100) for the ✓ label.
CONFIDENT: Final = 80
# The risk score when the judge cannot tell: a mixed verdict, an unsure one, or no judge at all.
UNSURE_RISK: Final = 50


class Flag(StrEnum):
    """Why a judge or a gate doubts a claim; shown beside the claim and counted in the compact line."""

    WRONG_NUMBER = "wrong-number"
    WRONG_YEAR = "wrong-year"
    WRONG_DATE = "wrong-date"
    WRONG_NAME = "wrong-name"
    WRONG_PLACE = "wrong-place"
    WRONG_SUBJECT = (
        "wrong-subject"  # the passage that matches says it of another subject (another station, engine)
    )
    NEGATION = "negation"
    ANTONYM = "antonym"
    NOT_IN_SOURCES = "not-in-sources"
    NOVEL_CONTENT = "novel-content"
    LOW_SIMILARITY = "low-similarity"
    SUPERSEDED = "superseded-source"
    OTHER_SOURCE = "supported-by-other-source"
    UNCITED = "uncited"
    QUOTE_NOT_FOUND = "quote-not-found"  # the quote gate found the judge's quote nowhere in its source
    QUOTE_MISSES_CLAIM = "quote-misses-claim"  # the quote is in its source but says too little of the claim


# Mismatches that mean "a source says otherwise" when the claim is otherwise well aligned.
CONTRADICTION_FLAGS: Final = frozenset(
    {
        Flag.WRONG_NUMBER,
        Flag.WRONG_YEAR,
        Flag.WRONG_DATE,
        Flag.WRONG_NAME,
        Flag.WRONG_PLACE,
        Flag.NEGATION,
        Flag.ANTONYM,
    }
)


class JudgeMode(StrEnum):
    """Which judges the panel runs (`VERIFIER_MODE`)."""

    LOCAL = "local"
    CLAUDE = "claude"
    CASCADE = "cascade"

    @property
    def label(self) -> str:
        return _MODE_LABELS[self]


_MODE_LABELS: Final = {
    JudgeMode.LOCAL: "Local judge only",
    JudgeMode.CLAUDE: "Claude judge only",
    JudgeMode.CASCADE: "Panel: local and Claude jurors, Claude tie-breaker",
}
# The judge a vote of the local judge names (a Claude vote names its model).
LOCAL_JUDGE: Final = JudgeMode.LOCAL.value


class JurorRole(StrEnum):
    """The part a vote plays in the panel."""

    JUROR = "juror"
    TIEBREAKER = "tiebreaker"

    @property
    def label(self) -> str:
        return "Tie-breaker" if self is JurorRole.TIEBREAKER else "Juror"


class Severity(StrEnum):
    """What a failed critic check does: a warning shown beside the answer, or a block that withholds it."""

    WARN = "warn"
    BLOCK = "block"

    @property
    def label(self) -> str:
        return "Warning" if self is Severity.WARN else "Block"


Term = ClaimStatus | Verdict | JudgeMode | JurorRole | Severity


def choices(members: Iterable[Term]) -> list[tuple[str, str]]:
    """(value, label) pairs for a model field's or a form's choices."""
    return [(member.value, member.label) for member in members]
