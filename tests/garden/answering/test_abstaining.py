"""Answers that answer, or say the notes do not: the local synthesiser's abstention on the sample garden."""

import pytest

from garden.answering.asking import question_ask
from garden.answering.synthesis import SourceText, abstention_text
from garden.models import Generator
from verifier.queueing import verification_create

pytestmark = pytest.mark.django_db

# The diesel fleet's note names D2187 Dunnock, its builder and its work, but never its colour.
COLOUR = "What colour is the diesel shunter D2187 Dunnock painted?"
# Its membership note holds the fact in a table's row.
LIFE_MEMBERSHIP = "How much does life membership cost?"


def test_a_question_its_notes_are_about_but_do_not_answer_is_abstained_on_at_no_cost():
    answer = question_ask(text=COLOUR)
    assert answer.abstained and not answer.refused and answer.generator == Generator.EXTRACTIVE
    assert answer.cost_usd == 0
    assert "Diesel fleet" in answer.text and "none of them says what the question asks" in answer.text
    sources = list(answer.sources.select_related("passage__article"))
    assert sources and any(s.passage.article.slug == "diesel-fleet" for s in sources)
    assert verification_create(answer=answer) is None  # it makes no claim to check


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("How much water does the tank at Brackenford hold?", "45,000"),
        (LIFE_MEMBERSHIP, "£450.00"),
        ("How many levers are there in the Millbridge signal box?", "21-lever"),
    ],
)
def test_when_the_notes_answer_the_sentence_that_gives_the_fact_comes_first(question, fact):
    answer = question_ask(text=question)
    assert not answer.abstained
    first = answer.text.split(" [", 1)[0]
    assert fact in first, answer.text


def test_a_fact_in_a_table_is_read_as_its_row_not_its_markup():
    answer = question_ask(text=LIFE_MEMBERSHIP)
    assert answer.text.startswith("Life membership: £450.00 (one payment) [")
    assert "|" not in answer.text


def test_a_comparison_is_answered_from_its_notes_not_abstained_on():
    answer = question_ask(text="Which is heavier, No. 4 Millbridge or River Kest?")
    assert not answer.abstained and "tonnes" in answer.text


def test_the_abstention_names_at_most_three_notes_and_counts_the_others():
    sources = [
        SourceText(n, title, "text") for n, title in enumerate(["A", "B", "A", "C", "D", "E"], start=1)
    ]
    assert abstention_text(sources).startswith("The garden has notes on this (“A”, “B”, “C” and 2 more), but")
