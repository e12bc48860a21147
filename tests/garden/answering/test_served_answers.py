"""Answers from a model served over the OpenAI API (`ANSWER_PROVIDER=openai`), through the real `openai` SDK and
a local fake chat completions server: cited as Claude's are, streamed, condensing follow-ups, booked at the
model's price, and, when the server fails, the local synthesiser's answer in its place with the reason logged."""

import logging
import re
from decimal import Decimal

import pytest

from garden.answering.asking import question_ask, question_stream
from garden.answering.condensing import SYSTEM_PROMPT as CONDENSE_PROMPT
from garden.answering.streaming import AskEvent, AskEventKind
from garden.answering.synthesis.claude import STREAM_BROKEN, SYSTEM_PROMPT
from garden.models import Answer, Generator, SearchRule
from providers.errors import (
    CONNECTION_MESSAGE,
    MALFORMED_MESSAGE,
    RATE_LIMITED_MESSAGE,
    SERVER_ERROR_MESSAGE,
    TIMEOUT_MESSAGE,
)
from tests.conftest import SERVED_MODEL
from tests.fakes import chat_completions as chat
from tests.fakes import messages_api as fake
from verifier.models import Spend, SpendPurpose

pytestmark = pytest.mark.django_db

IN_SCOPE = "How long is the Harrowden Viaduct and how many arches does it have?"
TUNNEL = "How long is Cold Knap Tunnel?"
CITED = re.compile(r"\[\d+\]")


def test_the_served_model_answers_from_numbered_sources_and_costs_nothing_by_default(served):
    served.enqueue(chat.completion("The viaduct is 196 m long [1].", prompt_tokens=900, completion_tokens=40))

    answer = question_ask(text=IN_SCOPE)

    assert answer.generator == Generator.SERVED and answer.model == SERVED_MODEL
    assert answer.text == "The viaduct is 196 m long [1]." and not answer.error
    assert (answer.input_tokens, answer.output_tokens, answer.cost_usd) == (900, 40, Decimal(0))
    [request] = served.requests
    assert request["path"] == "/v1/chat/completions"
    sent = request["body"]
    assert sent["model"] == SERVED_MODEL and sent["max_tokens"] == 700
    system, user = sent["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    first = answer.sources.get(number=1).passage
    assert (
        user["role"] == "user" and '<source number="1"' in user["content"] and first.text in user["content"]
    )
    booked = Spend.objects.get(purpose=SpendPurpose.ANSWER)
    assert booked.settled and booked.model == SERVED_MODEL and booked.cost_usd == 0


def test_a_price_for_the_model_books_what_its_tokens_cost(served, settings):
    settings.OPENAI_PRICES = {"fake-llama": (Decimal("1"), Decimal("2"))}
    served.enqueue(chat.completion("The viaduct is 196 m long [1].", prompt_tokens=900, completion_tokens=40))

    answer = question_ask(text=IN_SCOPE)

    assert answer.cost_usd == Decimal("0.000980")  # 900 x $1 + 40 x $2 a million
    assert Spend.objects.get(purpose=SpendPurpose.ANSWER).cost_usd == Decimal("0.000980")


def test_an_answer_cut_at_its_length_keeps_its_whole_sentences(served):
    served.enqueue(chat.completion("It is 196 m long [1]. It has 11 ar", finish_reason="length"))
    answer = question_ask(text=IN_SCOPE)
    assert answer.text == "It is 196 m long [1]." and answer.generator == Generator.SERVED


def stored(events: list[AskEvent]) -> Answer:
    """The stored answer a stream ends with."""
    answer = events[-1].answer
    assert events[-1].kind == AskEventKind.ANSWER and answer is not None
    return answer


def _down() -> str:
    """A local address nothing listens on."""
    gone = chat.FakeChatAPI()
    gone.close()
    return gone.base_url


@pytest.mark.parametrize(
    ("behaviour", "message", "requests"),
    [
        (chat.status(429, headers={"retry-after": "0"}), RATE_LIMITED_MESSAGE, 2),
        (chat.status(500), SERVER_ERROR_MESSAGE, 2),
        (fake.delay(5.0, chat.completion("Too late [1].")), TIMEOUT_MESSAGE, 2),
        (fake.malformed(b'{"id": "chatcmpl-1", "choices": [tru'), MALFORMED_MESSAGE, 1),
        (chat.completion("", finish_reason="stop"), "empty answer", 1),
        (None, CONNECTION_MESSAGE, 0),
    ],
    ids=["rate-limited", "server-error", "timeout", "malformed-json", "empty", "server-down"],
)
def test_when_the_served_model_fails_the_local_synthesiser_answers_and_the_log_says_why(
    served, settings, caplog, behaviour, message, requests
):
    if behaviour is None:
        settings.OPENAI_BASE_URL = _down()
    else:
        served.set_default(behaviour)
    settings.OPENAI_TIMEOUT_SECONDS = 0.5
    caplog.set_level(logging.WARNING)

    answer = question_ask(text=IN_SCOPE)

    stored = Answer.objects.get(pk=answer.pk)
    assert stored.generator == Generator.EXTRACTIVE and not stored.error
    assert CITED.search(stored.text) and stored.sources.exists()  # nothing lost: an answer, with its sources
    assert served.request_count == requests  # transient failures: the first try and one retry
    said = [r.getMessage() for r in caplog.records if "could not write the answer" in r.getMessage()]
    assert len(said) == 1 and SERVED_MODEL in said[0] and message.lower() in said[0].lower()
    assert stored.model_failed == said[0]  # and the reader is told it, on the answer


def test_a_streamed_answer_arrives_a_word_at_a_time_and_is_stored_whole(served):
    text = "The viaduct is 196 m long and has 11 arches [1]."
    served.enqueue(chat.streamed(text, prompt_tokens=850))

    events = list(question_stream(text=IN_SCOPE))

    deltas = [e.text for e in events if e.kind == AskEventKind.DELTA]
    assert len(deltas) > 3 and "".join(deltas) == text
    answer = stored(events)
    assert answer.generator == Generator.SERVED and answer.model == SERVED_MODEL and answer.text == text
    assert (answer.input_tokens, answer.output_tokens) == (850, len(fake.stream_words(text)))
    sent = served.last_request["body"]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


def test_a_stream_that_fails_before_its_first_word_gives_the_local_answer(served):
    served.set_default(chat.status(500))

    events = list(question_stream(text=IN_SCOPE))

    deltas = [e.text for e in events if e.kind == AskEventKind.DELTA]
    answer = stored(events)
    assert answer.generator == Generator.EXTRACTIVE and not answer.error
    assert "".join(deltas) == answer.text and CITED.search(answer.text)
    assert SERVED_MODEL in answer.model_failed and "local synthesiser wrote it" in answer.model_failed


@pytest.mark.parametrize("break_with", ["error", "drop"])
def test_a_stream_that_breaks_mid_answer_keeps_no_half_text(served, break_with):
    served.enqueue(
        chat.streamed(
            "The viaduct is 196 m long and has 11 arches [1].", break_after=3, break_with=break_with
        )
    )

    events = list(question_stream(text=IN_SCOPE))

    answer = stored(events)
    assert answer.generator == Generator.SERVED and answer.text == ""
    assert answer.error == STREAM_BROKEN if break_with == "error" else "lost" in answer.error


def test_a_follow_up_is_condensed_by_the_served_model(served):
    served.enqueue(chat.completion("Cold Knap Tunnel is 402 m long [1]."))
    first = question_ask(text=TUNNEL)
    served.enqueue(
        chat.completion("When was Cold Knap Tunnel built?", prompt_tokens=80, completion_tokens=9),
        chat.completion("It was built between 1873 and 1875 [1]."),
    )

    follow_up = question_ask(text="When was it built?", conversation=first.question.conversation)

    assert follow_up.question.search_rule == SearchRule.CONDENSED
    assert follow_up.question.searched_for == "When was Cold Knap Tunnel built?"
    condensing, answering = (r["body"] for r in served.requests[-2:])
    assert condensing["messages"][0] == {"role": "system", "content": CONDENSE_PROMPT}
    assert "When was Cold Knap Tunnel built?" in answering["messages"][1]["content"]
    assert follow_up.generator == Generator.SERVED


def test_without_answer_provider_nothing_is_sent_to_a_configured_server(fake_chat_api, settings):
    settings.OPENAI_BASE_URL = fake_chat_api.base_url
    settings.OPENAI_ANSWER_MODEL = SERVED_MODEL

    answer = question_ask(text=IN_SCOPE)

    assert answer.generator == Generator.EXTRACTIVE and fake_chat_api.request_count == 0
