"""A reader's conversations and what their browser session keeps: whose a conversation is, the questions a page
will stream, the recent conversations the home page lists.

A reader's questions are theirs: the home page lists only the conversations this reader started (a logged-in
reader's own, an anonymous visitor's in this session, whose conversations' ids the session keeps), and only their
owner may ask in a conversation; anyone else's id is not found, as an unknown one is.
"""

from __future__ import annotations

import secrets
import uuid

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.contrib.sessions.backends.base import SessionBase
from django.db.models import Count

from garden.errors import UserFacingError
from garden.models import Answer, Conversation, Question

RECENT_LIMIT = 8
SESSION_ASKED = (
    "asked"  # the public ids of the answers this session's anonymous visitor was given, newest last
)
SESSION_CONVERSATIONS = (
    "conversations"  # the public ids of the conversations this session started, newest last
)
SESSION_STREAMS = "streams"  # questions a page asked whose answers it has yet to stream, by a random token
STREAMS_KEPT = 4  # a reader asks one at a time; a few more cover tabs asked at once
STREAM_GONE = (
    "This answer was streamed already, or the question has expired. Your conversations are listed on the home "
    "page."
)
CONVERSATION_NOT_FOUND = (
    "No conversation of yours has this id: ask without one to start a new conversation. (A visitor who is not "
    "signed in continues only the conversations of their own browser session.)"
)


class ConversationNotFound(UserFacingError):
    """The conversation id names none that the asker may continue."""

    def __init__(self) -> None:
        super().__init__(CONVERSATION_NOT_FOUND)


def conversation_owned(
    public_id: str | uuid.UUID | None,
    user: AbstractBaseUser | AnonymousUser | None,
    session: SessionBase | None = None,
) -> Conversation | None:
    """The conversation at `public_id` that `user` may continue: a signed-in reader's own; for a visitor who is
    not signed in, one started in this `session`; from the command line (no `user`), any. None when no id is
    given; raises `ConversationNotFound` for an id that is malformed, unknown or someone else's (the same
    answer for all three, so nothing tells whether another reader's conversation exists)."""
    if public_id is None or public_id == "":
        return None
    try:
        conversation = Conversation.objects.filter(public_id=uuid.UUID(str(public_id))).first()
    except ValueError:
        conversation = None
    if conversation is None or (user is not None and not conversation_is_owned(conversation, user, session)):
        raise ConversationNotFound
    return conversation


def conversation_is_owned(
    conversation: Conversation, user: AbstractBaseUser | AnonymousUser, session: SessionBase | None
) -> bool:
    """Whether `user` (in `session`) may continue `conversation`, as `conversation_owned` decides: only its
    owner is given its id (a reader given one of its answers' addresses sees its turns up to that answer)."""
    if user.is_authenticated:
        return conversation.started_by_id == user.pk
    started_here = session is not None and str(conversation.public_id) in session.get(
        SESSION_CONVERSATIONS, []
    )
    return conversation.started_by_id is None and started_here


def stream_begin(session: SessionBase, text: str, conversation: Conversation | None) -> str:
    """Keep a question the page will stream the answer of (its question box posted it; the browser's
    `EventSource` then fetches the stream, which can only be a GET); the token that fetches it, once."""
    token = secrets.token_urlsafe(16)
    waiting = dict(list(session.get(SESSION_STREAMS, {}).items())[-(STREAMS_KEPT - 1) :])
    waiting[token] = {"question": text, "conversation": str(conversation.public_id) if conversation else None}
    session[SESSION_STREAMS] = waiting
    return token


def stream_take(session: SessionBase, token: str) -> tuple[str, str | None] | None:
    """The question (and conversation id) kept under `token`, forgotten as it is taken; None when there is none
    (streamed already, or from another session)."""
    waiting = dict(session.get(SESSION_STREAMS, {}))
    kept = waiting.pop(token, None)
    if kept is None:
        return None
    session[SESSION_STREAMS] = waiting
    return kept["question"], kept["conversation"]


def session_remember(session: SessionBase, answer: Answer) -> None:
    """Keep `answer` among this session's questions, and its conversation among the session's (the newest few:
    the page lists no more)."""
    session[SESSION_ASKED] = [*session.get(SESSION_ASKED, []), str(answer.public_id)][-RECENT_LIMIT:]
    conversation = answer.question.conversation
    if conversation is not None:
        kept = [c for c in session.get(SESSION_CONVERSATIONS, []) if c != str(conversation.public_id)]
        session[SESSION_CONVERSATIONS] = [*kept, str(conversation.public_id)][-RECENT_LIMIT:]


def conversations_recent(
    user: AbstractBaseUser | AnonymousUser, session: SessionBase
) -> list[tuple[Conversation, Question]]:
    """The reader's own conversations, latest asked first, each with its first question whose answer a reader
    may see: a logged-in reader's, or those started in this session by a visitor who is not logged in."""
    conversations = Conversation.objects.annotate(turns=Count("questions"))
    if user.is_authenticated:
        conversations = conversations.filter(started_by_id=user.pk)
    else:
        conversations = conversations.filter(
            public_id__in=session.get(SESSION_CONVERSATIONS, []), started_by__isnull=True
        )
    latest = list(conversations.order_by("-updated_at")[:RECENT_LIMIT])
    firsts: dict[int, Question] = {}
    # An answer withheld with a note it drew on is not listed: the conversation shows from its next readable turn.
    for question in (
        Question.objects.filter(conversation__in=latest, answer__in=Answer.objects.readable())
        .select_related("answer")
        .order_by("turn")
    ):
        firsts.setdefault(question.conversation_id or 0, question)
    return [(c, firsts[c.pk]) for c in latest if c.pk in firsts]
