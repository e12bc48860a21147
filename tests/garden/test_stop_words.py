"""The extractive answers' stop words, built from the engine's shared list, are the list they replaced."""

from garden.answering.synthesis.extractive import STOP_WORDS as EXTRACTIVE_STOP_WORDS
from text.words import STOP_WORDS, word_set

OLD_EXTRACTIVE_STOP_WORDS = word_set(
    """
    a about all an and any are as at be been being but by can could did do does each every for from had has
    have her his how i if in into is it its many may me might much must my no not of on one or our shall
    should so than that the their then there these they this those to was we were what when where which who
    whom whose why will with would you your
    """
)


def test_the_extractive_stop_words_are_the_old_list() -> None:
    assert EXTRACTIVE_STOP_WORDS == OLD_EXTRACTIVE_STOP_WORDS
    assert STOP_WORDS <= EXTRACTIVE_STOP_WORDS
