"""Served embeddings (`EMBEDDING_BACKEND=openai`): a garden switched over to a model of another size with
`reembed_garden`, imported and searched through the real `openai` SDK against the fake embeddings API; the
server's faults stop an import with a clear message and lose nothing; a garden of one model's vectors is never
searched with another's question."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction

from garden.answering.asking import QuestionError, question_ask
from garden.answering.retrieval import EmbedderMismatch, retrieve, vector_candidates
from garden.models import Article, Passage, Question
from garden.sync import ImportStopped, garden_import
from garden.sync.vector_column import vector_column_dimensions
from providers import embeddings
from tests.factories import garden_write
from tests.fakes.embeddings_api import DIMENSIONS, FakeEmbeddingsAPI
from verifier.checking import CheckError, garden_check

pytestmark = pytest.mark.django_db

SERVED = f"openai:fake-embed@{DIMENSIONS}"
NOTES = {
    "lighthouse.md": "---\ntitle: Ashcombe lighthouse\n---\nThe Ashcombe lighthouse is painted red and white; "
    "its lamp was electrified in 1936 and shows two white flashes every ten seconds.\n",
    "bakery.md": "---\ntitle: Sourdough starter\n---\nFeed the sourdough starter with rye flour and water every "
    "morning; keep it in a cool larder between bakes.\n",
    "beehives.md": "---\ntitle: Hive inspections\n---\nInspect each beehive weekly in spring for queen cells, "
    "brood pattern and varroa mites.\n",
}
QUESTION = "How many white flashes does the Ashcombe lighthouse lamp show?"


@pytest.fixture
def served(settings, fake_embeddings_api: FakeEmbeddingsAPI) -> FakeEmbeddingsAPI:
    """The fake embeddings API as the configured embedder, in a garden holding nothing yet. Its bags of words
    are further apart than MiniLM's vectors: the gate's vector threshold is one calibrated for it."""
    Article.objects.all().delete()
    settings.RETRIEVAL_VECTOR_THRESHOLD = 0.3
    settings.EMBEDDING_BACKEND = "openai"
    settings.OPENAI_EMBEDDING_MODEL = "fake-embed"
    settings.EMBEDDING_DIMENSIONS = DIMENSIONS
    settings.OPENAI_BASE_URL = fake_embeddings_api.base_url
    settings.OPENAI_MAX_RETRIES = 0
    settings.OPENAI_TIMEOUT_SECONDS = 5.0
    return fake_embeddings_api


def _switch() -> str:
    out = io.StringIO()
    call_command("reembed_garden", stdout=out)
    return out.getvalue()


def test_an_import_before_the_switch_is_refused_saying_how_and_imports_nothing(served, tmp_path):
    report = garden_import([garden_write(tmp_path / "g", NOTES)])

    assert "python manage.py reembed_garden" in report.refused[0][1]
    assert (
        f"hold 384 numbers and the configured embedder ({SERVED}) makes {DIMENSIONS}" in report.refused[0][1]
    )
    assert not Article.objects.exists() and served.request_count == 0


def test_a_garden_switched_and_imported_with_a_served_embedder_answers_from_the_right_note(served, tmp_path):
    assert f"from 384 numbers to {DIMENSIONS}" in _switch()
    assert vector_column_dimensions() == DIMENSIONS

    report = garden_import([garden_write(tmp_path / "g", NOTES)])

    assert report.created == 3 and not report.refused and not report.failures
    assert set(Passage.objects.values_list("embedded_by", flat=True)) == {SERVED}
    assert served.last_request["body"]["model"] == "fake-embed"
    nearest, _ = vector_candidates(embeddings.embed_one(QUESTION), limit=1)[0]
    assert Passage.objects.get(pk=nearest).article.slug == "lighthouse"
    assert retrieve(QUESTION).articles[0].article_id == Article.objects.get(slug="lighthouse").pk


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (lambda api: api.wrong_size(32), f"vectors of 32 numbers, and EMBEDDING_DIMENSIONS is {DIMENSIONS}"),
        (lambda api: api.error(500), "HTTP 500"),
        (lambda api: api.error(429), "HTTP 429"),
        (lambda api: api.malformed(b"{not json"), "not valid JSON"),
    ],
)
def test_a_fault_of_the_server_stops_the_import_saying_so_and_loses_nothing(served, tmp_path, fault, said):
    _switch()
    folder = garden_write(tmp_path / "g", {"lighthouse.md": NOTES["lighthouse.md"]})
    garden_import([folder])
    garden_write(folder, {"bakery.md": NOTES["bakery.md"]})
    fault(served)

    with pytest.raises(ImportStopped) as stopped:
        garden_import([folder])

    assert "The served embedding model fake-embed at http://127.0.0.1:" in str(stopped.value)
    assert said in str(stopped.value) and "run the import again to resume" in str(stopped.value)
    assert list(Article.objects.values_list("slug", flat=True)) == ["lighthouse"]
    assert Passage.objects.filter(article__slug="lighthouse", is_current=True).exists()
    assert garden_import([folder]).created == 1  # the server is back: the note left out is imported
    assert Article.objects.count() == 2


def test_a_server_that_is_down_stops_the_import_saying_where(served, settings, tmp_path):
    _switch()
    served.close()

    with pytest.raises(
        ImportStopped, match=r"fake-embed at http://127\.0\.0\.1:\d+/v1 failed: Could not connect"
    ):
        garden_import([garden_write(tmp_path / "g", NOTES)])
    assert not Article.objects.exists()


def test_a_question_embedded_by_another_model_than_the_garden_s_is_refused_with_a_clear_error(
    served, settings, tmp_path
):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    garden_import([garden_write(tmp_path / "g", NOTES)])
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_DIMENSIONS = served.dimensions = (
        384  # the column's size: only the names tell the models apart
    )
    questions = Question.objects.count()

    with pytest.raises(
        EmbedderMismatch, match=r"embedded by onnx-int8/v\d+, and questions now are by openai:"
    ):
        retrieve(QUESTION)
    with pytest.raises(QuestionError, match=r"python manage\.py reembed_garden"):
        question_ask(text=QUESTION, user=None)
    assert Question.objects.count() == questions  # nothing stored


def test_a_question_of_another_size_than_the_garden_s_vectors_is_refused_with_a_clear_error(
    served, settings, tmp_path
):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    garden_import([garden_write(tmp_path / "g", NOTES)])
    settings.EMBEDDING_BACKEND = "openai"

    with pytest.raises(EmbedderMismatch, match="cannot be compared"), transaction.atomic():
        retrieve(QUESTION)


def test_reembed_garden_switches_a_garden_over_and_back(served, settings, tmp_path):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    folder = garden_write(tmp_path / "g", NOTES)
    garden_import([folder])
    garden_write(folder, {"lighthouse.md": NOTES["lighthouse.md"].replace("1936", "1937")})
    garden_import([folder])  # an earlier revision's passages, which the judges read, are switched too
    passages = Passage.objects.count()
    settings.EMBEDDING_BACKEND = "openai"

    said = _switch()

    assert f"Embedded {passages} passages again with {SERVED}" in said
    assert set(Passage.objects.values_list("embedded_by", flat=True)) == {SERVED}
    assert vector_column_dimensions() == DIMENSIONS
    assert retrieve(QUESTION).articles[0].article_id == Article.objects.get(slug="lighthouse").pk
    assert "nothing to do" in _switch()

    settings.EMBEDDING_BACKEND = "onnx-int8"
    assert f"from {DIMENSIONS} numbers to 384" in _switch()
    assert retrieve(QUESTION).articles[0].article_id == Article.objects.get(slug="lighthouse").pk


def test_reembed_garden_stopped_by_the_server_says_so_and_resumes(served, settings, tmp_path):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    garden_import([garden_write(tmp_path / "g", NOTES)])
    settings.EMBEDDING_BACKEND = "openai"
    served.error(500)

    with pytest.raises(CommandError, match=r"HTTP 500.*run reembed_garden again to resume"):
        _switch()
    assert "Embedded 3 passages again" in _switch()


def test_a_fact_check_against_another_model_s_garden_is_refused_with_the_same_error(
    served, settings, tmp_path
):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    garden_import([garden_write(tmp_path / "g", NOTES)])
    settings.EMBEDDING_BACKEND = "openai"
    settings.EMBEDDING_DIMENSIONS = served.dimensions = 384

    with pytest.raises(CheckError, match="cannot be compared"):
        garden_check("The Ashcombe lighthouse lamp shows two white flashes.")


def test_the_served_embedder_failing_while_the_local_answer_is_written_is_said_not_raised(served):
    """Retrieval embedded the question; the server then fails as the local synthesiser embeds its sentences:
    the answer says so, with nothing raised (its question and retrieval are stored as any failed answer's)."""
    from garden.answering.synthesis import SourceText, extractive

    served.error(500)
    written = extractive.synthesize(
        QUESTION, [SourceText(1, "Ashcombe lighthouse", NOTES["lighthouse.md"].split("---\n")[-1])]
    )

    assert written.text == "" and "fake-embed" in written.error and "try again" in written.error
