"""Ask, ask streamed, follow up: a question answered from the garden, its check queued.

A follow-up is a question asked in a conversation (`conversation_id`), which only its owner may continue; the
pages ask in two steps when they stream (`question_admit` as the question box posts it, `answer_stream` when the
browser fetches the stream), every other surface in one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin

from dashboard.actions.callers import (
    Caller,
    Operator,
    admit,
    caller_reader,
    caller_slot,
    caller_user,
    spent_by,
)
from dashboard.actions.refusals import Outcome, Refused
from dashboard.conversations import ConversationNotFound, conversation_owned
from dashboard.permissions import may_ask
from garden import selectors
from garden.answering.asking import (
    AnswerStream,
    Asking,
    QuestionError,
    question_ask,
    question_clean,
    question_stream,
)
from garden.answering.streaming import AskEvent
from garden.answering.synthesis import writer_for
from garden.models import Answer, Conversation
from verifier.queueing import verification_request
from verifier.roles import ASK
from verifier.scopes import TokenScope

ASK_FORBIDDEN = "Log in as a reader (or above) to use this endpoint."

ConversationId = str | uuid.UUID | None


def answer_ask(caller: Caller, text: str | None, conversation_id: ConversationId = None) -> Answer:
    """Answer the question (in the conversation, when given) and queue its check; the answer as the caller may
    see it. Refused: forbidden, limited, not found (the conversation), invalid (the question), busy, withheld (a
    source was withheld between the answer and its reading)."""
    admit_asking(caller, counted=True)
    conversation = _conversation(caller, conversation_id)
    with spent_by(caller):
        try:
            answer = ask(text, caller_user(caller), caller_slot(caller), conversation)
        except QuestionError as error:
            raise Refused(Outcome.INVALID, error.message) from None
    return answer_seen(caller, answer)


def question_admit(
    caller: Caller, text: str | None, conversation_id: ConversationId = None
) -> tuple[str, Conversation | None]:
    """The first step of a page's streamed question: the question, cleaned, and the conversation it continues,
    once the caller may ask it (counted against the rate limit now); `answer_stream(admitted=True)` answers it."""
    admit_asking(caller, counted=True)
    conversation = _conversation(caller, conversation_id)
    try:
        return question_clean(text), conversation
    except QuestionError as error:
        raise Refused(Outcome.INVALID, error.message) from None


class CallerStream:
    """An answer's stream whose every step is booked to its caller: Claude is paid as the stream is read, after
    the surface that asked has returned. `close()` ends it early (stored as the reader having left)."""

    def __init__(self, stream: AnswerStream, caller: Caller) -> None:
        self._stream = stream
        self._caller = caller
        self.sources = stream.sources

    def __iter__(self) -> Iterator[AskEvent]:
        return self

    def __next__(self) -> AskEvent:
        with spent_by(self._caller):
            return next(self._stream)

    def close(self) -> None:
        with spent_by(self._caller):
            self._stream.close()


def answer_stream(
    caller: Caller, text: str | None, conversation_id: ConversationId = None, *, admitted: bool = False
) -> CallerStream:
    """`answer_ask` with the answer's events as they come: its words as they are written, then the stored answer
    (which `answer_seen` loads as the caller may see it); its check is queued once the answer is whole.
    `admitted`: the question was counted already (`question_admit`)."""
    admit_asking(caller, counted=not admitted)
    conversation = _conversation(caller, conversation_id)
    with spent_by(caller):  # a follow-up's condensing is booked now
        try:
            stream = ask_streaming(text, caller_user(caller), caller_slot(caller), conversation)
        except QuestionError as error:
            raise Refused(Outcome.INVALID, error.message) from None
    return CallerStream(stream, caller)


def answer_seen(caller: Caller, answer: Answer) -> Answer:
    """The stored `answer` loaded again as the caller may see it; withheld when one of its sources was withheld
    (or left the caller's audiences) meanwhile: its page says why."""
    reader = caller_reader(caller)
    loaded = selectors.answer_get(answer.public_id, reader)
    why = (
        selectors.answer_hidden_message(reader)
        if loaded is None
        else selectors.answer_hidden_reason(loaded, reader)
    )
    if loaded is None or why is not None:
        raise Refused(Outcome.WITHHELD, why or "", address=answer.get_absolute_url())
    return loaded


def admit_asking(caller: Caller, *, counted: bool) -> None:
    """Whether the caller may ask (and read answers and verdicts): `counted`, a question counts against the
    caller's rate limit."""
    admit(caller, TokenScope.ASK, may=may_ask, forbidden=ASK_FORBIDDEN, limit="ask" if counted else None)


def ask(
    text: str | None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
    conversation: Conversation | None = None,
) -> Answer:
    """Answer the question and queue its verification once the answer is committed (the answer and its
    pending verification are stored together). A visitor who is not signed in (`user` anonymous, as a page or
    the API gives it) asks on the anonymous visitors' Claude allowance; no `user` is the command line.
    `claude_slot` is held while Claude writes the answer (a web request's: `dashboard.claude_slots.claude_slot()`).
    `conversation` (from `conversation_owned`) is the one this question continues; None starts a new one.

    Raises `garden.answering.asking.QuestionError` for an empty or over-long question, and what `claude_slot` raises.
    """
    return question_ask(text=text, **_asking(user, claude_slot, conversation))


def ask_streaming(
    text: str | None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
    conversation: Conversation | None = None,
) -> AnswerStream:
    """`ask`, with the answer's words as they are written (`garden.answering.asking.question_stream`): its
    verification is queued once the stored answer is committed, which a broken stream's never is."""
    return question_stream(text=text, **_asking(user, claude_slot, conversation))


def _asking(
    user: AbstractBaseUser | AnonymousUser | None,
    claude_slot: AbstractContextManager[object] | None,
    conversation: Conversation | None,
) -> Asking:
    return Asking(
        user=user,
        anonymous=user is not None and spends_as_visitor(user),
        on_stored=lambda answer: verification_request(answer=answer),
        claude_slot=claude_slot,
        conversation=conversation,
    )


def claude_writes_for(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether a model (Claude or a served one: `ANSWER_PROVIDER`) writes this asker's answers, so a page streams
    them; the local synthesiser's and a refusal come whole at once, and stay one request."""
    return writer_for(anonymous=spends_as_visitor(user)) is not None


def spends_as_visitor(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether this asker's Claude spend comes from the visitors' allowance (ANONYMOUS_CLAUDE_DAILY_USD): having
    no role, not being signed out, is what makes a visitor, so an account given no role spends as one does."""
    return not (isinstance(user, (PermissionsMixin, AnonymousUser)) and user.has_perm(ASK))


def _conversation(caller: Caller, conversation_id: ConversationId) -> Conversation | None:
    """The conversation the caller continues: a signed-in reader's own, a visitor's of this session, any for
    the operator; not found for anyone else's (as for an unknown id)."""
    if isinstance(caller, Operator):
        owner, session = None, None  # (any conversation)
    else:
        owner, session = caller.user, getattr(caller, "session", None)
    try:
        return conversation_owned(conversation_id, owner, session)
    except ConversationNotFound as error:
        raise Refused(Outcome.NOT_FOUND, error.message) from None
