"""The engine's answer scoring of the garden's own refusal (garden.answering.asking needs Django, so this test lives here;
the rest of the answer scoring's tests are in tests/claimcheck/test_answer_scoring.py)."""

from claimcheck.answer_scoring import score_answer
from garden.answering.asking import REFUSAL_TEXT
from tests.claimcheck.test_answer_scoring import TUNNEL


def test_a_refusal_answers_an_out_of_scope_question_and_nothing_in_scope():
    ethanol = "What is the boiling point of ethanol at sea level?"
    assert score_answer(
        answer=REFUSAL_TEXT, expected=None, question=ethanol, in_scope=False, refused=True
    ).answers
    declined = "The sources do not cover the boiling point of ethanol."
    assert score_answer(answer=declined, expected=None, question=ethanol, in_scope=False).answers is True
    answered = "Ethanol boils at 78 degrees at sea level."
    assert score_answer(answer=answered, expected=None, question=ethanol, in_scope=False).answers is False
    # The gate refused an in-scope question: not an answer, whatever its text holds.
    in_scope = score_answer(answer="402 m", expected="402 m", question=TUNNEL, refused=True)
    assert in_scope.answers is False
