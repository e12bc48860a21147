"""Readers' marks: an answer helpful or not, a claim reported wrong with an optional note.

One mark per reader per answer and one report per reader per claim; a second replaces the first. A reader is an
account, or a visitor not signed in by their browser session (`marker_of`). A mark is shown only to its own reader;
a reported claim goes to the editors' review queue (`verifier.review.claims_flagged`), and an editor's decision
on it is a review like any other, which retraining reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import QuerySet

from garden.models import Answer
from verifier.models import AnswerMark, Claim, ClaimReport
from verifier.review import NOTE_TOO_LONG, ReviewError

MARKED_HELPFUL = "You marked this answer helpful."
MARKED_UNHELPFUL = "You marked this answer not helpful."
MARKED_WRONG = "You marked this wrong"


@dataclass(frozen=True)
class ReaderMarks:
    """One reader's own marks on the answers of a page: `helpful` by answer public id, `reported` (the note,
    maybe empty) by claim id."""

    helpful: dict[str, bool] = field(default_factory=dict)
    reported: dict[int, str] = field(default_factory=dict)


NO_MARKS = ReaderMarks()


@dataclass(frozen=True)
class UnhelpfulShare:
    """Of the answers readers marked (`marked`), how many at least one reader marked not helpful."""

    unhelpful: int
    marked: int

    @property
    def rate(self) -> float | None:
        return self.unhelpful / self.marked if self.marked else None


def marker_of(user: AbstractBaseUser | AnonymousUser, session_key: str | None) -> str | None:
    """Who is marking: an account by its id, a visitor by their session; None for a visitor with no session."""
    if user.is_authenticated:
        return f"user:{user.pk}"
    return f"session:{session_key}" if session_key else None


def _user_id(user: AbstractBaseUser | AnonymousUser) -> int | None:
    return user.pk if user.is_authenticated else None


@transaction.atomic
def answer_mark_record(
    *, answer: Answer, marker: str, user: AbstractBaseUser | AnonymousUser, helpful: bool
) -> AnswerMark:
    """Store this reader's mark on `answer`, replacing any they made before."""
    mark, _ = AnswerMark.objects.update_or_create(
        answer=answer, marker=marker, defaults={"helpful": helpful, "user_id": _user_id(user)}
    )
    return mark


@transaction.atomic
def claim_report_record(
    *, claim: Claim, marker: str, user: AbstractBaseUser | AnonymousUser, note: str = ""
) -> ClaimReport:
    """Store this reader's report that `claim` is wrong, replacing any they made before. The note is bounded as
    an editor's is (REVIEW_NOTE_MAX_CHARS); over it nothing is recorded."""
    note = note.replace("\x00", "").strip()
    limit = settings.REVIEW_NOTE_MAX_CHARS
    if len(note) > limit:
        raise ReviewError(NOTE_TOO_LONG.format(limit=limit, length=len(note)))
    report, _ = ClaimReport.objects.update_or_create(
        claim=claim, marker=marker, defaults={"note": note, "user_id": _user_id(user)}
    )
    return report


def marks_of(marker: str | None, answers: Iterable[Answer]) -> ReaderMarks:
    """This reader's own marks on `answers` and their claims (two queries); none for no reader."""
    ids = [answer.pk for answer in answers]
    if marker is None or not ids:
        return NO_MARKS
    helpful = {
        str(public_id): value
        for public_id, value in AnswerMark.objects.filter(marker=marker, answer_id__in=ids).values_list(
            "answer__public_id", "helpful"
        )
    }
    reported = dict(
        ClaimReport.objects.filter(marker=marker, claim__verification__answer_id__in=ids).values_list(
            "claim_id", "note"
        )
    )
    return ReaderMarks(helpful=helpful, reported=reported)


def answers_unhelpful(answers: QuerySet[Answer]) -> UnhelpfulShare:
    """The share of `answers` readers marked unhelpful: of those any reader marked, those at least one reader
    marked not helpful."""
    marks = AnswerMark.objects.filter(answer__in=answers.order_by().values("pk"))
    return UnhelpfulShare(
        unhelpful=marks.filter(helpful=False).values("answer").distinct().count(),
        marked=marks.values("answer").distinct().count(),
    )
