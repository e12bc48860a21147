"""BEGIN's cross-validation folds are cut by document: snippets that share text never sit on both sides."""

from evaluation.calibration.evaluate import begin_documents

FILM = "The film was shot in Prague over eleven weeks in the spring of 1998 by a crew of forty."
SAME_FILM = "Shot in Prague over eleven weeks in the spring, it opened in 1999 to mixed reviews."
SAME_FILM_LATER = "It opened in 1999 to mixed reviews and later found an audience on home video."
OTHER = "Basalt columns form when thick lava cools slowly and contracts into prisms."


def test_snippets_sharing_a_run_of_words_are_one_document_even_through_another() -> None:
    documents = begin_documents([FILM, SAME_FILM, SAME_FILM_LATER, OTHER])
    assert sorted(map(sorted, documents)) == sorted([sorted([FILM, SAME_FILM, SAME_FILM_LATER]), [OTHER]])


def test_a_few_common_words_do_not_join_two_documents() -> None:
    one = "The station opened in 1889 and is one of the oldest in the county."
    two = "The library opened in 1889 and holds the county's oldest maps."
    assert len(begin_documents([one, two])) == 2
