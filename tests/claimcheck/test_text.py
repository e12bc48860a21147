"""The shared words (`text.words`): the lists built from them are the lists they replaced, word for word.

The old literal lists are pasted here once (sorted), so any change to a derived list shows as a failing test: the
critics', the answer scoring's, the claim splitter's and the passage splitter's; the extractive answers' stop words
are checked in tests/garden/test_stop_words.py (that module needs Django). The local judge's list stays a literal
of its own.
"""

from decimal import Decimal

from claimcheck.answer_scoring.figures import is_year_amount
from claimcheck.answer_scoring.words import STOP_WORDS as ANSWER_SCORING_STOP_WORDS
from claimcheck.claims import _ABBREVIATIONS as CLAIM_ABBREVIATIONS
from claimcheck.claims import split_sentences
from claimcheck.critics.base import _STOPWORDS as CRITICS_STOP_WORDS
from claimcheck.judges.local.figures import is_written_year
from claimcheck.judges.local.lexicon import STOPWORDS as JUDGE_STOPWORDS
from garden.passages import ABBREVIATIONS as PASSAGE_ABBREVIATIONS
from garden.passages import sentence_spans
from text.words import ABBREVIATIONS, STOP_WORDS, is_year, word_set

OLD_CRITICS_STOP_WORDS = word_set(
    """
    a about above according after again against all also although am an and any are article articles as at
    be because been before being below between both but by can could describe described describes did do
    does doing down during each explain explained explains few for from further garden had has have having
    he her here hers herself him himself his how however i if in into is it its itself just may me mention
    mentioned mentions might more most must my myself no nor not note noted notes of off on once only or
    other our ours ourselves out over own per said same says shall she should so some source sources state
    stated states such than that the their theirs them themselves then there therefore these they this those
    though through thus to too under until up us very via was we were what when where whereas whether which
    while who whom why will with would yet you your yours yourself yourselves
    """
)
OLD_ANSWER_SCORING_STOP_WORDS = word_set(
    """
    a about above across after again against ago all almost along also although am among an and another any
    approximately are around as at be because been before being below between both but by can cannot co
    could currently did do does doing done down dr during each either even ever every few for from further
    get gets got had has have having he her here hers him his how however i if in instead into is it its
    itself just least less ltd many may me might more most mr mrs ms much must my near nearly neither no nor
    nos not now number of off on once one ones only onto or other our out over per plc quite rather really
    roughly same several shall she should since so some still such than that the their theirs them then
    there these they this those though through to today too total toward towards under until up upon us very
    via was we well were what when where whether which while who whom whose why will with within without
    would year years yes yet you your
    """
)
OLD_CLAIM_ABBREVIATIONS = word_set(
    """
    a.m al approx apr art aug ave blvd bros ca capt cf ch cit co col corp dec dept dr e.g e.u ed eds eq eqs
    est etc feb fig figs fri ft gen gov hon i.e ibid inc jan jr jul jun lt ltd mar mon mr mrs ms mt no nos
    nov oct op p p.m para pp pres prof rd rep rev sat sec sen sep sept sgt sr st sun thu tue u.k u.n u.s
    u.s.a v vol vols vs wed
    """
)
OLD_PASSAGE_ABBREVIATIONS = word_set(
    """
    a.m approx apr aug ca capt cf co col corp dec dept dr e.g est etc feb fig ft gen hon i.e inc jan jr jul
    jun lt ltd mar max min mr mrs ms mt no nos nov oct p.m prof rev sep sept sgt sr st u.k u.s vs
    """
)


def test_each_derived_stop_word_list_is_the_old_list() -> None:
    assert CRITICS_STOP_WORDS == OLD_CRITICS_STOP_WORDS
    assert ANSWER_SCORING_STOP_WORDS == OLD_ANSWER_SCORING_STOP_WORDS


def test_each_derived_abbreviation_list_is_the_old_list() -> None:
    assert CLAIM_ABBREVIATIONS == OLD_CLAIM_ABBREVIATIONS
    assert PASSAGE_ABBREVIATIONS == OLD_PASSAGE_ABBREVIATIONS


def test_the_shared_lists_are_in_every_list_that_uses_them() -> None:
    """The shared words are dropped by all four stop-word lists, the fitted judge's included, and both splitters
    know the shared abbreviations."""
    assert len(STOP_WORDS) == 73
    assert STOP_WORDS <= JUDGE_STOPWORDS
    assert STOP_WORDS <= CRITICS_STOP_WORDS & ANSWER_SCORING_STOP_WORDS
    assert ABBREVIATIONS <= CLAIM_ABBREVIATIONS & PASSAGE_ABBREVIATIONS


def test_both_splitters_read_a_shared_abbreviation_as_no_sentence_end() -> None:
    text = "Dr. Smith built the mill in 1876. It closed in 1990."
    assert [text[start:end] for start, end in split_sentences(text)] == [
        "Dr. Smith built the mill in 1876.",
        "It closed in 1990.",
    ]
    assert [span.of(text) for span in sentence_spans(text)] == [
        "Dr. Smith built the mill in 1876.",
        "It closed in 1990.",
    ]


def test_the_claim_splitter_knows_more_abbreviations_than_the_passage_splitter() -> None:
    """A volume number ends no claim, but a stored passage still breaks there, as it always has."""
    text = "See vol. Two of the history."
    assert len(split_sentences(text)) == 1
    assert [span.of(text) for span in sentence_spans(text)] == ["See vol.", "Two of the history."]


def test_years_are_one_range_read_from_written_figures_and_parsed_amounts() -> None:
    assert is_year(1000) and is_year(2100) and not is_year(999) and not is_year(2101)
    assert is_written_year("1876") and is_written_year("2100")
    assert not is_written_year("876") and not is_written_year("1876.5")
    assert is_year_amount(Decimal("1876")) and is_year_amount(Decimal("1876.0"))
    assert not is_year_amount(Decimal("1876.5")) and not is_year_amount("1876")


def test_answer_scoring_stops_its_years_one_short_of_the_judge() -> None:
    """Kept as it was, so that the answer scoring's results did not move (see YEARS in its figures module)."""
    assert is_written_year("2100")
    assert not is_year_amount(Decimal("2100"))
