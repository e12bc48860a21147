"""The pages and the API with a model served over the OpenAI API writing the answers: they say which model
answered, and stream its words as they do Claude's."""

import html

import pytest
from django.test import Client

from garden.models import Answer, Generator
from tests.conftest import SERVED_MODEL
from tests.dashboard.test_streaming import events_of, stream_ask, words_then_answer
from tests.factories import login
from tests.fakes import chat_completions as chat

pytestmark = pytest.mark.django_db

QUESTION = "How long is the Harrowden Viaduct and how many arches does it have?"
WRITTEN = "The viaduct is 196 m long [1]. It has twenty-one arches [2]."


def test_the_answer_page_names_the_served_model_that_answered(
    client: Client, served: chat.FakeChatAPI
) -> None:
    served.enqueue(chat.completion(WRITTEN))
    login(client, "reader")

    response = client.post("/", {"question": QUESTION})
    page = client.get(response["Location"]).content.decode()

    assert "The viaduct is 196 m long" in page
    assert f"({SERVED_MODEL})" in page and "Answered by" in page
    assert Answer.objects.get().generator == Generator.SERVED


def test_a_reader_is_told_when_the_served_model_failed_and_the_local_synthesiser_answered(
    client: Client, served: chat.FakeChatAPI
) -> None:
    served.set_default(chat.status(500))
    login(client, "reader")

    response = client.post("/", {"question": QUESTION})
    page = html.unescape(client.get(response["Location"]).content.decode())
    api = client.get(f"/api/answers/{Answer.objects.get().public_id}").json()

    assert f"The served model {SERVED_MODEL} could not write the answer" in page
    assert "Answered by Local extractive synthesiser" in " ".join(page.split())
    assert api["generator"] == "extractive" and SERVED_MODEL in api["model_failed"]


def test_the_api_streams_the_served_model_s_answer_and_names_it(
    client: Client, served: chat.FakeChatAPI
) -> None:
    served.enqueue(chat.streamed(WRITTEN))
    login(client, "reader")

    words, answer = words_then_answer(events_of(stream_ask(client).streaming_content))

    assert len(words) > 5 and "".join(words) == WRITTEN
    assert (
        answer["answer"] == WRITTEN
        and answer["model"] == SERVED_MODEL
        and answer["generator"] == Generator.SERVED
    )
