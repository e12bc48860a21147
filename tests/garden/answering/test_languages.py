"""Notes in more than one language: a garden written in English, German and French (beside the English sample
garden) answers each language's question from the note in that language by full-text search, each passage
stemmed in its own language and the question in each language the garden's passages are in."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from garden.answering.asking import question_ask
from garden.answering.followups import garden_words
from garden.answering.retrieval import Thresholds, gather, question_lexemes, retrieve
from garden.models import Article, Passage

pytestmark = pytest.mark.django_db

LANGUAGES = Path(__file__).resolve().parents[1] / "gardens" / "languages"
# Asked in each note's language, in words the note inflects otherwise: "Bienenvolk" for its "Bienenvölker",
# "alt" for "alten"; "fromages", "affinés" for "fromage", "affiné"; "carries" for "carry".
GERMAN = ("Wie alt ist das Bienenvolk am Südhang?", "Imkerei am Hang")
FRENCH = ("Combien de semaines les fromages de chèvre sont affinés ?", "Fromagerie du moulin")
ENGLISH = ("Who carries the lanterns to the old mill?", "Lantern walk")


def text_only() -> Thresholds:
    """The gate's thresholds in force, but no vector hit counts: what is counted is found by full-text search."""
    return Thresholds(vector=2.0, text=Thresholds.in_force().text)


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = tmp_path / "languages"
    folder.mkdir()
    for note in LANGUAGES.iterdir():
        (folder / note.name).write_bytes(note.read_bytes())
    call_command("import_garden", str(folder), "--no-progress")
    return folder


def note_language(path: str) -> set[str]:
    return set(Passage.objects.filter(article__path=path, is_current=True).values_list("language", flat=True))


def test_each_note_is_stemmed_in_its_own_language(garden):
    assert note_language("Imkerei am Hang") == {"german"}  # its words show it
    assert note_language("Fromagerie du moulin") == {"french"}  # `lang: fr`
    assert note_language("Lantern walk") == {"english"}
    german = Passage.objects.get(article__path="Imkerei am Hang")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(search_vector) FROM garden_passage WHERE id = %s", [german.pk]
        )
        (lexemes,) = cursor.fetchone()
    assert {"bienenvolk", "honig", "koniginn"} <= set(lexemes)  # German stems; English keeps "bienenvölker"
    assert "die" not in lexemes  # a German stop word, which English would keep


@pytest.mark.parametrize("question, path", [GERMAN, FRENCH, ENGLISH])
def test_a_question_finds_the_note_in_its_language_by_full_text_search(garden, question, path):
    result = retrieve(question, thresholds=text_only())
    found = Article.objects.get(path=path)
    assert [hit.article_id for hit in result.articles] == [found.pk]
    assert result.articles[0].text_score == 1.0
    assert {source.article_id for source in result.sources} == {found.pk}


@pytest.mark.parametrize(
    "question, path, words",
    [
        (*GERMAN, "Die Bienenvölker stehen seit 1987 am Südhang"),
        (*FRENCH, "affiné pendant trois semaines"),
        (*ENGLISH, "carry paper lanterns along the towpath"),
    ],
)
def test_the_local_answer_quotes_the_note_in_the_question_s_language(garden, question, path, words):
    answer = question_ask(text=question)
    first = answer.sources.select_related("passage__article").first()
    assert not answer.refused and first is not None and first.passage.article.path == path
    assert words in answer.text


def test_without_its_language_s_stems_the_german_question_finds_nothing_by_its_words(garden):
    question, path = GERMAN
    lexemes = question_lexemes(question)
    assert set(lexemes) == {"english", "french", "german"}
    assert set(lexemes["german"]) == {
        "alt",
        "bienenvolk",
        "sudhang",
    }  # "wie", "ist", "das", "am" are stop words
    hits = gather(question).hits
    german = Article.objects.get(path=path).pk
    assert max(hit.text_score for hit in hits if hit.article_id == german) == 1.0
    # Taken in English, as every passage was before, its words are not the note's: no passage holds them all.
    assert not any(hit.text_score == 1.0 for hit in hits if hit.article_id != german)


def test_the_words_a_question_asks_with_are_not_searched_for(garden):
    assert "combien" not in question_lexemes(FRENCH[0])["french"]
    assert "wann" not in question_lexemes("Wann wird der Honig geschleudert?")["german"]


def test_a_question_out_of_every_note_s_language_is_refused_as_before(garden):
    assert retrieve("Wer hat die Fußballweltmeisterschaft 1998 gewonnen?").empty


def test_a_follow_up_s_words_are_found_in_the_passages_of_their_language(garden):
    # The notes say "Bienenvölker", "affiné" and "lanterns": each word is found by its own language's stem.
    assert garden_words(["bienenvolk", "affinés", "lantern", "zeppelin"]) == {
        "bienenvolk": True,
        "affinés": True,
        "lantern": True,
        "zeppelin": False,
    }
