"""The face's one entry point for a question: ask the garden, then ask the verifier to check the answer.

A reader's questions are theirs: the home page lists only the questions this reader asked (a logged-in reader's
own, an anonymous visitor's in this session, whose answers' ids the session keeps).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.sessions.backends.base import SessionBase
from django.db.models import QuerySet

from garden.answering.asking import question_ask
from garden.models import Answer, Question
from garden.readers import reader_of
from verifier.queueing import verification_request

RECENT_LIMIT = 8
SESSION_ASKED = (
    "asked"  # the public ids of the answers this session's anonymous visitor was given, newest last
)


def ask(
    text: str | None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
) -> Answer:
    """Answer the question and queue its verification once the answer is committed (the answer and its
    pending verification are stored together). A visitor who is not signed in (`user` anonymous, as a page or
    the API gives it) asks on the anonymous visitors' Claude allowance; no `user` is the command line.
    `claude_slot` is held while Claude writes the answer (a web request's: `dashboard.claude_slots.claude_slot()`).

    Raises `garden.answering.asking.QuestionError` for an empty or over-long question, and what `claude_slot` raises.
    """
    anonymous = user is not None and not user.is_authenticated
    return question_ask(
        text=text,
        user=user,
        anonymous=anonymous,
        on_stored=lambda answer: verification_request(answer=answer),
        claude_slot=claude_slot,
    )


def asked_remember(session: SessionBase, answer: Answer) -> None:
    """Keep `answer` among this session's questions (the newest few: the page lists no more)."""
    session[SESSION_ASKED] = [*session.get(SESSION_ASKED, []), str(answer.public_id)][-RECENT_LIMIT:]


def questions_recent(user: AbstractBaseUser | AnonymousUser, session: SessionBase) -> QuerySet[Question]:
    """The reader's own recent questions with an answer a reader may see, newest first: a logged-in reader's,
    or the ones asked in this session by a visitor who is not logged in."""
    # An answer withheld with a note it drew on, or drawn from notes no longer the reader's (they left an
    # audience), is not listed either: its page would be a 404.
    reader = reader_of(user)
    questions = Question.objects.select_related("answer").filter(answer__in=Answer.objects.readable(reader))
    if user.is_authenticated:
        questions = questions.filter(asked_by_id=user.pk)
    else:
        questions = questions.filter(
            answer__public_id__in=session.get(SESSION_ASKED, []), asked_by__isnull=True
        )
    return questions.order_by("-created_at")[:RECENT_LIMIT]
