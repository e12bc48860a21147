"""The flow of one question: pre-flight, retrieval, the refusal gate, synthesis, and storing it all."""

from __future__ import annotations

import time
from collections import abc
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from typing import TypedDict, Unpack

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from garden.answering.conversations import Retrieved, conversation_retrieve
from garden.answering.preflight import Preflight, preflight
from garden.answering.retrieval import EmbedderMismatch, RetrievalResult
from garden.answering.streaming import AskEvent, AskEventKind, ShownText
from garden.answering.synthesis import (
    SourceText,
    Synthesis,
    synthesize,
    synthesize_streaming,
    writer_for,
)
from garden.answering.synthesis.claude import ReaderLeft, StreamTimedOut
from garden.errors import UserFacingError
from garden.models import (
    Answer,
    AnswerSource,
    Conversation,
    Generator,
    Passage,
    Question,
    Retrieval,
    RetrievedArticle,
    SearchRule,
)
from garden.readers import Reader, reader_of
from garden.selectors import passages_shown
from garden.storable import storable
from providers.embeddings import EmbeddingError
from providers.timing import phase

EMPTY_QUESTION = "Please type a question."
QUESTION_TOO_LONG = "Questions are limited to {limit:,} characters; yours has {length:,}. Please shorten it."
REFUSAL_TEXT = (
    "I don't have material on this in the garden, so I can't answer it. "
    "Try rephrasing with the words the articles would use, or browse the articles."
)
REFUSAL_REASON = "No topic, article or theme in the garden matched the question."
CONVERSATION_FULL = (
    "This conversation has {limit:,} turns, the most one may have: start a new conversation to ask more."
)


class QuestionError(UserFacingError):
    """A question that cannot be asked (empty, too long, or the next turn of a full conversation)."""


def question_clean(text: str | None) -> str:
    """The question with surrounding space removed; raises QuestionError when empty or too long.

    The length is checked first (surrounding space aside): nothing else may run over an over-long question.
    """
    text = (text or "").strip()
    limit = settings.QUESTION_MAX_CHARS
    if len(text) > limit:
        raise QuestionError(QUESTION_TOO_LONG.format(limit=limit, length=len(text)))
    text = storable(text).strip()
    if not text:
        raise QuestionError(EMPTY_QUESTION)
    return text


@phase("database")
def _sources(result: RetrievalResult) -> list[tuple[int, Passage, float]]:
    passages = Passage.objects.select_related("article").in_bulk([hit.passage_id for hit in result.sources])
    return [
        (number, passages[hit.passage_id], hit.score) for number, hit in enumerate(result.sources, start=1)
    ]


@dataclass(frozen=True)
class _Asked:
    """A question cleaned, pre-flighted and retrieved: all that comes before its answer is written."""

    text: str
    began: float
    check: Preflight
    reader: Reader
    anonymous: bool  # asked by a visitor who is not signed in (`Asking`)
    retrieved: Retrieved
    sources: list[tuple[int, Passage, float]]

    @property
    def refused(self) -> bool:
        return self.retrieved.refused

    @property
    def written_for(self) -> str:
        """The question the answer is written for: Claude's condensed follow-up, else the question."""
        search = self.retrieved.search
        return search.text if search.rule == SearchRule.CONDENSED else self.text

    def source_texts(self) -> list[SourceText]:
        """The sources as the asker is shown them: a link to a note not theirs names nothing."""
        shown = passages_shown([passage for _, passage, _ in self.sources], self.reader)
        return [
            SourceText(number, passage.cited_as, shown[passage.pk]) for number, passage, _ in self.sources
        ]


class Asking(TypedDict, total=False):
    """Who asks a question, where, and what runs once its answer is stored: the options `question_ask` and
    `question_stream` share.

    `user`: the asker (None: the command line or a run). `anonymous`: asked by a visitor who is not signed in,
    whose answer (and its check) spends only their own Claude allowance, none by default
    (`ANONYMOUS_CLAUDE_DAILY_USD`). `on_stored(answer)` runs in the transaction that stores the answer, so what
    it writes is stored with it. `claude_slot` is held while Claude condenses a follow-up and again while it
    writes the answer (entered once for each); what it raises (none free) comes out of the call, with nothing
    stored. `conversation`: the thread this question continues (whoever calls checks that the asker owns it);
    None starts a new one. A follow-up is retrieved with what came before
    (`garden.answering.conversations`). `reader`: whose garden the question is answered from when it is not
    `user`'s (a Verify-all run asked as an audience); `reader_of(user)` by default.
    """

    user: AbstractBaseUser | AnonymousUser | None
    anonymous: bool
    on_stored: Callable[[Answer], object] | None
    claude_slot: AbstractContextManager[object] | None
    conversation: Conversation | None
    reader: Reader | None


def _retrieve(text: str | None, asking: Asking) -> _Asked:
    text = question_clean(text)
    conversation = asking.get("conversation")
    # Each follow-up is retrieved (and condensed) with every turn before it: a thread's cost stays bounded.
    limit = settings.CONVERSATION_MAX_TURNS
    if conversation is not None and Question.objects.filter(conversation=conversation).count() >= limit:
        raise QuestionError(CONVERSATION_FULL.format(limit=limit))
    began = time.perf_counter()
    check = preflight(text)
    reader = asking.get("reader")
    reader = reader_of(asking.get("user")) if reader is None else reader
    anonymous = asking.get("anonymous", False)
    # The asker's garden: another audience's notes are not in it.
    try:
        retrieved = conversation_retrieve(
            text,
            asking.get("conversation"),
            reader,
            anonymous=anonymous,
            claude_slot=asking.get("claude_slot"),
        )
    except (
        EmbedderMismatch,
        EmbeddingError,
    ) as error:  # the garden cannot be searched now: said, nothing stored
        raise QuestionError(str(error)) from error
    sources = [] if retrieved.refused else _sources(retrieved.result)
    return _Asked(text, began, check, reader, anonymous, retrieved, sources)


def question_ask(*, text: str | None, **asking: Unpack[Asking]) -> Answer:
    """Answer a question from the garden and store the question, its retrieval and its answer (`Asking`: the
    options).

    When retrieval finds no topic, article or theme the canned refusal is stored and no model is called.
    A synthesis failure is stored on the answer (`error`) with a message for the reader; it never raises.
    Call this outside any transaction: synthesis books Claude's call with the daily budget, whose ledger
    lock and booking must be committed at once, not held for the length of the call.
    """
    asked = _retrieve(text, asking)
    if asked.refused:
        synthesis = Synthesis(REFUSAL_TEXT, Generator.REFUSAL)
    else:
        synthesis = synthesize(
            asked.written_for,
            asked.source_texts(),
            asked.retrieved.result.vector,
            asking.get("claude_slot"),
            anonymous=asked.anonymous,
        )
    return _store(asked, synthesis, asking)


def question_stream(*, text: str | None, **asking: Unpack[Asking]) -> AnswerStream:
    """`question_ask`, with the answer's words given as they are written: the events of
    `garden.answering.streaming` (`delta`s, then the stored `answer`).

    The question is cleaned, retrieved and judged by the refusal gate now, and the Claude slot taken now
    (`QuestionError` and what the slot raises come out of here, with nothing stored); the answer is written as
    the stream is read. A refusal is one `delta` of its text at no cost. The answer is stored (and `on_stored`
    run) once the stream has ended, whole or broken: a break is stored with its `error` and no text
    (`garden.answering.synthesis.claude.synthesize_streaming`), as is a stream closed before its end (the
    reader left: `READER_LEFT`), so no half answer is ever stored as whole.
    """
    asked = _retrieve(text, asking)
    held = ExitStack()
    claude_slot = asking.get("claude_slot")
    if not asked.refused and claude_slot is not None and writer_for(anonymous=asked.anonymous) is not None:
        held.enter_context(claude_slot)

    def stored(synthesis: Synthesis) -> Answer:
        return _store(asked, synthesis, asking)

    if asked.refused:
        events = _refusal_events(stored)
    else:
        sources = asked.source_texts()
        pieces = synthesize_streaming(
            asked.written_for, sources, asked.retrieved.result.vector, anonymous=asked.anonymous
        )
        shown = ShownText("\n".join(s.text for s in sources))
        readable = _sources_readable(asked)
        events = _written_events(pieces, shown, stored, readable=readable, written=held.close)
    return AnswerStream(events, held, asked.sources)


def _sources_readable(asked: _Asked) -> Callable[[], bool]:
    """Whether the asker may still see the words of the answer's sources: asked again before each delta leaves,
    by the rule a stored answer is held to (`AnswerQuerySet.readable`), since a note may be withheld or leave
    the asker's audiences while Claude writes from it."""
    passage_ids = [passage.pk for _, passage, _ in asked.sources]

    def readable() -> bool:
        with phase("database"):
            return not Passage.objects.filter(pk__in=passage_ids).unreadable(asked.reader).exists()

    return readable


def _refusal_events(stored: Callable[[Synthesis], Answer]) -> Iterator[AskEvent]:
    """The refusal, stored first: it is whole already, whether or not the reader stays for it."""
    answer = stored(Synthesis(REFUSAL_TEXT, Generator.REFUSAL))
    yield AskEvent(AskEventKind.DELTA, REFUSAL_TEXT)
    yield AskEvent(AskEventKind.ANSWER, answer=answer)


def _written_events(
    pieces: abc.Generator[str, None, Synthesis],
    shown: ShownText,
    stored: Callable[[Synthesis], Answer],
    *,
    readable: Callable[[], bool],
    written: Callable[[], object],
) -> Iterator[AskEvent]:
    """The deltas of the text as it may be shown, then the stored answer.

    Each delta leaves only once `readable()` says the asker may still see the sources' words; once it says
    not, no more words are shown, and the stored answer, withheld with its sources, ends the stream. At
    `STREAM_MAX_SECONDS` Claude is stopped (`StreamTimedOut`) and the answer stored saying so; `written()` runs
    as soon as the model is done (it gives back the Claude slot), before the last events are sent. Closed
    before its end (the reader left), Claude is stopped and the answer stored saying so."""
    deadline = time.monotonic() + settings.STREAM_MAX_SECONDS
    said = withheld = False
    stop: Exception | None = None
    try:
        while True:
            try:
                piece = next(pieces) if stop is None else pieces.throw(stop)
            except StopIteration as done:
                synthesis: Synthesis = done.value
                break
            if time.monotonic() > deadline:
                stop = StreamTimedOut()
                continue
            text = shown.feed(piece)
            if text and not withheld and not (withheld := not readable()):
                said = True
                yield AskEvent(AskEventKind.DELTA, text)
    except GeneratorExit:
        try:
            pieces.throw(ReaderLeft())
        except StopIteration as done:
            stored(done.value)
        raise
    written()
    if synthesis.error:
        last = ""
    elif synthesis.abstained and not said:
        last = synthesis.text  # in place of the model's `ABSTAINS`, held back
    else:
        last = shown.rest()
    if last and not withheld and readable():
        yield AskEvent(AskEventKind.DELTA, last)
    yield AskEvent(AskEventKind.ANSWER, answer=stored(synthesis))


class AnswerStream:
    """The events of a streamed question; `close()` ends it early (stored as the reader having left) and
    gives back the Claude slot, whether or not it was ever read."""

    def __init__(
        self, events: Iterator[AskEvent], held: ExitStack, sources: list[tuple[int, Passage, float]]
    ) -> None:
        self._events = events
        self._held = held
        self.sources = sources  # (number, passage, score) of each source the answer is written from

    def __iter__(self) -> AnswerStream:
        return self

    def __next__(self) -> AskEvent:
        try:
            return next(self._events)
        except BaseException:
            self._held.close()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._events, "close", None)
            if close is not None:
                close()
        finally:
            self._held.close()


def _store(asked: _Asked, synthesis: Synthesis, asking: Asking) -> Answer:
    """The question, its retrieval and its answer stored in one transaction (`on_stored` run in it)."""
    total_ms = round((time.perf_counter() - asked.began) * 1000)
    result, search, text = asked.retrieved.result, asked.retrieved.search, asked.text
    user, anonymous = asking.get("user"), asked.anonymous
    with phase("database"), transaction.atomic():
        conversation, turn = _next_turn(asking.get("conversation"), user, anonymous=anonymous)
        question = Question.objects.create(
            text=text,
            conversation=conversation,
            turn=turn,
            searched_for=search.text if search.text != text else "",
            search_rule=search.rule,
            asked_by_id=user.pk if user is not None and user.is_authenticated else None,
            anonymous=anonymous,
            preflight_domain=asked.check.domain,
            preflight_risk=asked.check.risk,
            preflight_suggestion=asked.check.suggestion,
        )
        retrieval = Retrieval.objects.create(
            question=question,
            refused=asked.refused,
            refusal_reason=(asked.retrieved.refusal_reason or REFUSAL_REASON) if asked.refused else "",
            latency_ms=result.latency_ms,
        )
        retrieval.topics.set(result.topic_ids)
        retrieval.themes.set(result.theme_ids)
        RetrievedArticle.objects.bulk_create(
            RetrievedArticle(
                retrieval=retrieval,
                article_id=hit.article_id,
                rank=rank,
                score=hit.score,
                vector_score=hit.vector_score,
                text_score=hit.text_score,
            )
            for rank, hit in enumerate(result.articles, start=1)
        )
        answer = Answer.objects.create(
            question=question,
            text=synthesis.text,
            generator=synthesis.generator,
            model=synthesis.model,
            error=synthesis.error,
            input_tokens=synthesis.input_tokens,
            output_tokens=synthesis.output_tokens,
            cost_usd=synthesis.cost_usd,
            latency_ms=total_ms,
            budget_held=synthesis.budget_held,
            model_failed=synthesis.model_failed,
            abstained=synthesis.abstained,
        )
        AnswerSource.objects.bulk_create(
            AnswerSource(answer=answer, number=number, passage=passage, score=score)
            for number, passage, score in asked.sources
        )
        if (on_stored := asking.get("on_stored")) is not None:
            on_stored(answer)
    return answer


def _next_turn(
    conversation: Conversation | None, user: AbstractBaseUser | AnonymousUser | None, *, anonymous: bool
) -> tuple[Conversation, int]:
    """The conversation the question is stored in (a new one when None) and its place there. The row is locked
    until the question is stored, so two questions asked at once in one conversation get a turn each."""
    if conversation is None:
        started_by = user.pk if user is not None and user.is_authenticated else None
        return Conversation.objects.create(started_by_id=started_by, anonymous=anonymous), 1
    locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
    locked.save(update_fields=["updated_at"])
    return locked, Question.objects.filter(conversation=locked).count() + 1
