"""The flow of one question: pre-flight, retrieval, the refusal gate, synthesis, and storing it all."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

from garden.answering.conversations import conversation_retrieve
from garden.answering.preflight import preflight
from garden.answering.retrieval import RetrievalResult
from garden.answering.synthesis import SourceText, Synthesis, synthesize
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
from providers.timing import phase

EMPTY_QUESTION = "Please type a question."
QUESTION_TOO_LONG = "Questions are limited to {limit:,} characters; yours has {length:,}. Please shorten it."
REFUSAL_TEXT = (
    "I don't have material on this in the garden, so I can't answer it. "
    "Try rephrasing with the words the articles would use, or browse the articles."
)
REFUSAL_REASON = "No topic, article or theme in the garden matched the question."


class QuestionError(UserFacingError):
    """A question that cannot be asked (empty or too long)."""


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


def question_ask(
    *,
    text: str | None,
    user: AbstractBaseUser | AnonymousUser | None = None,
    anonymous: bool = False,
    on_stored: Callable[[Answer], object] | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
    conversation: Conversation | None = None,
    reader: Reader | None = None,
) -> Answer:
    """Answer a question from the garden and store the question, its retrieval and its answer.

    When retrieval finds no topic, article or theme the canned refusal is stored and no model is called.
    A synthesis failure is stored on the answer (`error`) with a message for the reader; it never raises.
    `anonymous`: asked by a visitor who is not signed in, whose answer (and its check) spends only their own
    Claude allowance, none by default (`ANONYMOUS_CLAUDE_DAILY_USD`).
    `on_stored(answer)` runs in the transaction that stores the answer, so what it writes is stored with it.
    `claude_slot` is held while Claude writes the answer; what it raises (none free) comes out of here, with
    nothing stored.
    `conversation`: the thread this question continues (whoever calls checks that the asker owns it); None
    starts a new one. A follow-up is retrieved with what came before (`garden.answering.conversations`).
    `reader`: whose garden the question is answered from when it is not `user`'s (a Verify-all run asked as
    an audience); `reader_of(user)` by default.
    Call this outside any transaction: synthesis books Claude's call with the daily budget, whose ledger
    lock and booking must be committed at once, not held for the length of the call.
    """
    text = question_clean(text)
    began = time.perf_counter()
    check = preflight(text)
    reader = reader_of(user) if reader is None else reader
    # The asker's garden: another audience's notes are not in it.
    retrieved = conversation_retrieve(text, conversation, reader, anonymous=anonymous)
    result, search = retrieved.result, retrieved.search
    sources = [] if retrieved.refused else _sources(result)
    if retrieved.refused:
        synthesis = Synthesis(REFUSAL_TEXT, Generator.REFUSAL)
    else:
        # Written from the passages as the asker is shown them: a link to a note not theirs names nothing.
        shown = passages_shown([passage for _, passage, _ in sources], reader)
        synthesis = synthesize(
            search.text if search.rule == SearchRule.CONDENSED else text,
            [SourceText(number, passage.cited_as, shown[passage.pk]) for number, passage, _ in sources],
            result.vector,
            claude_slot,
            anonymous=anonymous,
        )
    total_ms = round((time.perf_counter() - began) * 1000)

    with phase("database"), transaction.atomic():
        conversation, turn = _next_turn(conversation, user, anonymous=anonymous)
        question = Question.objects.create(
            text=text,
            conversation=conversation,
            turn=turn,
            searched_for=search.text if search.text != text else "",
            search_rule=search.rule,
            asked_by_id=user.pk if user is not None and user.is_authenticated else None,
            anonymous=anonymous,
            preflight_domain=check.domain,
            preflight_risk=check.risk,
            preflight_suggestion=check.suggestion,
        )
        retrieval = Retrieval.objects.create(
            question=question,
            refused=retrieved.refused,
            refusal_reason=(retrieved.refusal_reason or REFUSAL_REASON) if retrieved.refused else "",
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
        )
        AnswerSource.objects.bulk_create(
            AnswerSource(answer=answer, number=number, passage=passage, score=score)
            for number, passage, score in sources
        )
        if on_stored is not None:
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
