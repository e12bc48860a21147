"""The claim splitter: sentences a reader would recognise, with exact spans and their own citations."""

from __future__ import annotations

import pytest

from claimcheck.claims import Sentence, split_claims
from text.markup import citation_numbers, strip_citations


def texts(claims: list[Sentence]) -> list[str]:
    return [c.text for c in claims]


def assert_spans(original: str, claims: list[Sentence]) -> None:
    for claim in claims:
        assert original[claim.start : claim.end] == claim.text
        assert claim.text == claim.text.strip()


def test_abbreviations_do_not_end_sentences() -> None:
    text = (
        "Dr. Smith moved to St. Louis in 1999. He worked for the U.S. Army, e.g. as a medic, i.e. in the field. "
        "His office was at No. 10 Baker St. near the park."
    )
    claims = split_claims(text)
    assert texts(claims) == [
        "Dr. Smith moved to St. Louis in 1999.",
        "He worked for the U.S. Army, e.g. as a medic, i.e. in the field.",
        "His office was at No. 10 Baker St. near the park.",
    ]
    assert_spans(text, claims)


def test_circa_born_and_died_before_a_year_do_not_end_sentences() -> None:
    text = "The line (opened c. 1876) was built by Fenwick (b. 1830, d. 1901) [1]. It closed in 1971."
    assert texts(split_claims(text)) == [
        "The line (opened c. 1876) was built by Fenwick (b. 1830, d. 1901) [1].",
        "It closed in 1971.",
    ]


def test_decimals_and_prices_stay_whole() -> None:
    text = "A ticket costs £16.50 and the walk is 3.5 km long. Version 2.1.4 added maps."
    assert texts(split_claims(text)) == [
        "A ticket costs £16.50 and the walk is 3.5 km long.",
        "Version 2.1.4 added maps.",
    ]


def test_citation_markers_belong_to_the_sentence_they_follow() -> None:
    text = (
        "The tower opened in 1889 [2]. It is 330 metres tall. [1] Gustave Eiffel's company built it [1][3]."
    )
    claims = split_claims(text)
    assert texts(claims) == [
        "The tower opened in 1889 [2].",
        "It is 330 metres tall. [1]",
        "Gustave Eiffel's company built it [1][3].",
    ]
    assert [c.citations for c in claims] == [(2,), (1,), (1, 3)]
    assert_spans(text, claims)


def test_citation_lists_and_ranges() -> None:
    assert citation_numbers("Roses need sun [1, 3] and water [2-4].") == (1, 3, 2, 4)
    assert strip_citations("Roses need sun [1, 3].") == "Roses need sun."


def test_list_items_are_separate_claims_without_their_bullets() -> None:
    text = "Here is what the sources say:\n- Roses need sun [1].\n* Tulips bloom in spring.\n1. Water weekly.\n2) Prune in March [2]."
    claims = split_claims(text)
    assert texts(claims) == [
        "Here is what the sources say:",
        "Roses need sun [1].",
        "Tulips bloom in spring.",
        "Water weekly.",
        "Prune in March [2].",
    ]
    assert [c.is_claim for c in claims] == [False, True, True, True, True]
    assert claims[-1].citations == (2,)
    assert_spans(text, claims)


def test_quotes_keep_their_closing_mark() -> None:
    text = 'The sign said "Keep off the grass." Visitors ignored it.'
    assert texts(split_claims(text)) == ['The sign said "Keep off the grass."', "Visitors ignored it."]


@pytest.mark.parametrize(
    ("text", "quoting"),
    [
        ('He said "It opened in 1889. It closed in 1990." Then it reopened [3].', 'He said "It opened in 1889. It closed in 1990."'),
        ("The sign read “No entry. Trains only.” It was removed in 1960 [3].", "The sign read “No entry. Trains only.”"),
    ],
)  # fmt: skip
def test_a_quotation_of_several_sentences_is_one_claim_with_the_words_that_quote_it(
    text: str, quoting: str
) -> None:
    claims = split_claims(text)
    assert texts(claims) == [quoting, text[len(quoting) + 1 :]]
    assert claims[1].citations == (3,)
    assert_spans(text, claims)


def test_a_stray_quotation_mark_does_not_swallow_the_sentences_after_it() -> None:
    text = 'A stray " mark here. Then a new sentence. And another one.'
    assert len(split_claims(text)) == 3


@pytest.mark.parametrize(
    "sentence",
    [
        "Great question!",
        "I hope this helps.",
        "Here is what the sources say:",
        "Let me know if you need anything else.",
        "Thanks for asking.",
        "Would you like to know more?",
        "Sometimes slower?!",
        "Sources: [1] Harrowden Viaduct; [2] Kestrel Valley Railway Museum.",
    ],
)
def test_meta_statements_and_questions_are_kept_but_not_claims(sentence: str) -> None:
    claims = split_claims(f"{sentence} The Eiffel Tower opened in Paris in 1889.")
    assert [c.is_claim for c in claims] == [False, True]
    assert claims[0].text == sentence


def test_a_label_on_its_own_line_is_not_a_claim_but_a_line_of_dialogue_is() -> None:
    claims = split_claims("Key facts:\n- It has 11 arches [1]\nTom: The viaduct has 11 arches.")
    assert [(c.text, c.is_claim) for c in claims] == [
        ("Key facts:", False),
        ("It has 11 arches [1]", True),
        ("Tom: The viaduct has 11 arches.", True),
    ]


def test_a_markdown_heading_is_kept_but_not_a_claim() -> None:
    claims = split_claims("## History of the line\nThe line opened in 1876 [1].")
    assert [(c.text, c.is_claim) for c in claims] == [
        ("History of the line", False),
        ("The line opened in 1876 [1].", True),
    ]


def test_initials_and_lower_case_chat() -> None:
    assert len(split_claims("J. R. R. Tolkien wrote The Hobbit. It sold well.")) == 2
    assert texts(split_claims("i saw it. it was great.")) == ["i saw it.", "it was great."]


def test_empty_text_has_no_claims() -> None:
    assert split_claims("") == []
    assert split_claims("   \n  ") == []
