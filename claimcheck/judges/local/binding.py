"""The subject check: a passage supports a claim only if it says it of the claim's own subject.

"Millbridge station has two platforms and a footbridge" does not support "Fellside station has two platforms",
though every word of the claim but one is in the sentence. The rule, per clause of the claim:

- The claim's subject is its clause's subject noun phrase (`subjects.subject_of`); a claim whose subject is a
  pronoun, or that has no subject the judge can read, is not checked.
- A passage clause is *about* the subject when the subject's words are in it or in its topic (a pronoun or
  "the station" followed back to the subject named before it), or, when the source names no subject before
  it, in the source's heading or article title (`Source.context`).
- It is *another subject's* when its topic is a rival of the subject (`subjects.conflicts`): the same head
  told apart by other words ("the tank engines" against "the tender engine"), or another proper name.
- Otherwise it is neutral: it may well speak of the subject under another name ("the group" for "the
  Beatles").
- A claim word found in the source only in clauses of another subject is misplaced. The claim is said of
  another subject when one of its figures or names is misplaced, or at least half its other words are.
- A subject the source names nowhere (nor its heading or title) is not checked: the passage cannot be about
  another subject of its kind when the source does not know it, and a new name is `wrong-name`'s business.
  Nor is a subject that stands for the source itself ("The article discusses ...").
- Such a claim is contradicted when a clause about its own subject gives another figure in the same slot
  ("the tender engine every 45 days" against "every 30 days"), else misattributed: the garden says it, of
  another subject, and nothing of this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from claimcheck.judges.local.clauses import Clause, Figure, claim_clauses
from claimcheck.judges.local.encoding import Text
from claimcheck.judges.local.lexicon import split_words, stem
from claimcheck.judges.local.sources import Prepared
from claimcheck.judges.local.subjects import META_SUBJECTS, Subject, conflicts, name_positions
from claimcheck.terms import Flag

# At least this share of a claim's other words found only under another subject says the claim is that one's.
MISPLACED_SHARE: Final = 0.5
_FIGURE_FLAGS: Final = {"number": Flag.WRONG_NUMBER, "year": Flag.WRONG_YEAR, "month": Flag.WRONG_DATE}


@dataclass(frozen=True)
class WrongSubject:
    """A claim said in the source of another subject: the flags, whether a passage about the claim's own subject
    says otherwise, and the piece to quote (that passage, else the one about the other subject)."""

    flags: tuple[str, ...]
    contradicted: bool
    piece: int
    # The claim's words and figures the source holds only under the other subject.
    words: frozenset[str] = frozenset()
    figures: frozenset[str] = frozenset()

    def is_absent_from(self, source: Prepared) -> bool:
        """Whether `source` lacks one of the words or figures this source holds only under another subject."""
        return not (self.words <= source.stems and self.figures <= source.numbers)


def context_stems(context: str) -> frozenset[str]:
    """The stems of a source's heading and article title."""
    return frozenset(stem(word) for word, _, _ in split_words(context))


def subject_words(claim: Text, source: Prepared) -> frozenset[str]:
    """The stems of the claim's subjects (to find in a heading or title)."""
    return frozenset(
        word
        for clause in claim_clauses(claim, source.lowercase)
        if clause.topic is not None
        for word in clause.topic.words
    )


def check_subject(
    claim: Text, source: Prepared, context: frozenset[str] = frozenset()
) -> WrongSubject | None:
    """None when the source says the claim of its own subject (or the claim cannot be checked), else why not."""
    if not source.clauses:
        return None
    clauses = claim_clauses(claim, source.lowercase)
    names = name_positions(claim.words, source.lowercase | frozenset(w for w in claim.words if w.islower()))
    claim_stems = frozenset(claim.stems)
    for clause in clauses:
        subject = clause.topic
        if subject is None or subject.pronoun or not subject.verb or subject.head in META_SUBJECTS:
            continue  # no subject the judge can read: a pronoun, a phrase without a verb, the source itself
        if not subject.key & (source.stems | context):
            continue
        anchors = {claim.stems[k] for k in names if clause.start <= k < clause.end} - subject.words
        found = _wrong_subject(clause, subject, anchors, claim_stems, source, context)
        if found is not None:
            return found
    return None


def _wrong_subject(
    clause: Clause,
    subject: Subject,
    anchors: set[str],
    claim_stems: frozenset[str],
    source: Prepared,
    context: frozenset[str],
) -> WrongSubject | None:
    about = [_about(c, subject, context) for c in source.clauses]
    placed = [
        is_about or not _rival(c, subject, claim_stems)
        for c, is_about in zip(source.clauses, about, strict=True)
    ]
    words = [w for w in clause.stems - subject.words if w in source.stems]
    misplaced_words = [w for w in words if _misplaced([w in c.stems for c in source.clauses], placed)]
    misplaced_figures = [
        f
        for f in clause.figures
        if _misplaced([f.value in {g.value for g in c.figures} for c in source.clauses], placed)
    ]
    anchor_misplaced = bool(misplaced_figures) or bool(anchors & set(misplaced_words))
    if not anchor_misplaced and (not words or len(misplaced_words) < MISPLACED_SHARE * len(words)):
        return None
    own = [c for c, is_about in zip(source.clauses, about, strict=True) if is_about]
    moved = frozenset(misplaced_words), frozenset(f.value for f in misplaced_figures)
    for figure in clause.figures:
        other = _other_figure(figure, own)
        if other is not None:
            return WrongSubject((Flag.WRONG_SUBJECT, _FIGURE_FLAGS[figure.kind]), True, other.piece, *moved)
    evidence = (
        [f.value for f in misplaced_figures],
        [w for w in misplaced_words if w in anchors] or misplaced_words,
    )
    piece = next(
        (
            c.piece
            for c, is_placed in zip(source.clauses, placed, strict=True)
            if not is_placed
            and (
                any(v in {g.value for g in c.figures} for v in evidence[0])
                or any(w in c.stems for w in evidence[1])
            )
        ),
        -1,
    )
    return WrongSubject((Flag.WRONG_SUBJECT,), False, piece, *moved)


def _about(clause: Clause, subject: Subject, context: frozenset[str]) -> bool:
    """The clause names the subject, or its topic does, or (no subject named before it) the heading does."""
    said_of = clause.covered() | (context if clause.topic is None else frozenset())
    return subject.words <= said_of


def _rival(clause: Clause, subject: Subject, claim_stems: frozenset[str]) -> bool:
    return clause.topic is not None and conflicts(clause.topic, subject, claim_stems, clause.stems)


def _misplaced(holds: Sequence[bool], placed: Sequence[bool]) -> bool:
    """A word some clauses hold, all of them about another subject."""
    return any(holds) and not any(h and p for h, p in zip(holds, placed, strict=True))


def _other_figure(figure: Figure, own: Sequence[Clause]) -> Clause | None:
    """A clause about the subject giving another figure of the same kind in the same slot, and not this one."""
    for clause in own:
        values = {g.value for g in clause.figures}
        if figure.value in values:
            return None
    for clause in own:
        if any(
            g.kind == figure.kind and g.slot == figure.slot and g.value != figure.value
            for g in clause.figures
        ):
            return clause
    return None
