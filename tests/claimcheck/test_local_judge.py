"""The local judge on cases a reader would notice: right facts verified, wrong ones caught, quotes real."""

from __future__ import annotations

import pytest

from claimcheck.claims import split_claims
from claimcheck.judges.local import judge_claims, judge_text
from claimcheck.judges.types import Ruling, Source
from claimcheck.terms import NOT_SUPPORTED, ClaimStatus, Flag

EIFFEL = "The Eiffel Tower opened in Paris in 1889."
COLOSSEUM = "The Colosseum is an ancient amphitheatre in the centre of Rome, completed in 80 AD under Titus."


pytestmark = pytest.mark.usefixtures("judge_on_one_thread")


def judge(text: str, sources: list[Source]) -> list[Ruling]:
    return judge_claims(split_claims(text), sources)


def check_vote(vote: Ruling, sources: list[Source]) -> None:
    assert vote.status in set(ClaimStatus)
    assert 0.0 <= vote.confidence <= 1.0
    assert all(flag in set(Flag) for flag in vote.flags)
    if vote.quote:
        assert any(vote.quote in s.text for s in sources), "quotes must be verbatim source text"


def test_the_true_eiffel_claim_is_verified_with_the_exact_quote() -> None:
    sources = [Source(1, EIFFEL)]
    [vote] = judge(EIFFEL, sources)
    check_vote(vote, sources)
    assert vote.status == "verified"
    assert vote.quote == EIFFEL
    assert vote.source_index == 1
    assert vote.confidence >= 0.8


def test_wrong_city_and_year_are_caught_and_named() -> None:
    sources = [Source(1, EIFFEL)]
    [vote] = judge("The Eiffel Tower opened in Madrid in 1923.", sources)
    check_vote(vote, sources)
    assert vote.status in {"contradicted", "unverified"}
    assert "wrong-place" in vote.flags
    assert "wrong-year" in vote.flags
    assert vote.quote == EIFFEL


def test_a_wrong_place_alone_on_the_passage_about_it_is_contradicted() -> None:
    sources = [Source(1, EIFFEL)]
    [vote] = judge("The Eiffel Tower opened in Madrid.", sources)
    assert (vote.status, vote.quote) == ("contradicted", EIFFEL)
    assert "wrong-place" in vote.flags


def test_a_wrong_number_is_not_verified() -> None:
    sources = [Source(1, "The Tower is 330 metres tall and weighs about 10,100 tonnes.")]
    [vote] = judge("The Tower is 330 metres tall and weighs about 25,000 tonnes.", sources)
    check_vote(vote, sources)
    assert vote.status in NOT_SUPPORTED
    assert "wrong-number" in vote.flags


@pytest.mark.parametrize(
    "year", ["\uff11\uff18\uff18\uff19", "\u0661\u0668\u0668\u0669"], ids=["fullwidth", "arabic-indic"]
)
def test_a_year_written_in_other_digits_is_the_same_year(year: str) -> None:
    # Digits typed with a CJK or Arabic keyboard are still 1889: not a wrong year.
    sources = [Source(1, EIFFEL)]
    [vote] = judge(f"The Eiffel Tower opened in Paris in {year}.", sources)
    check_vote(vote, sources)
    assert vote.status == "verified" and vote.quote == EIFFEL
    assert "wrong-year" not in vote.flags


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        ("The viaduct was built between 1873 and 1875.", "The viaduct was built in 1873-75."),
        ("The locomotive weighs 24 tonnes.", "The locomotive weighs twenty-four tonnes."),
        ("The tunnel is 1,200 metres long.", "The tunnel is 1.2 km long."),
        ("The tunnel is 1.2 km long.", "The tunnel is 1,200 m long."),
        ("The shop is open from 10:00 to 16:30.", "The shop opens at 10am and closes at 4:30pm."),
        ("The line opened on 14 August 1876.", "The line opened on 14/08/1876."),
        ("The line is 14.5 km long.", "The line is roughly 15 km long."),
        ("The viaduct was built between 1873 and 1875.", "The viaduct was built around 1874."),
    ],
    ids=[
        "year-range",
        "number-words",
        "km-to-metres",
        "metres-to-km",
        "twelve-hour-clock",
        "slash-date",
        "rounded",
        "about-a-year",
    ],
)
def test_the_same_figure_written_another_way_is_not_a_wrong_number(source: str, claim: str) -> None:
    sources = [Source(1, source)]
    [vote] = judge(claim, sources)
    check_vote(vote, sources)
    assert vote.status != "contradicted"
    assert not {"wrong-number", "wrong-year"} & set(vote.flags)


@pytest.mark.parametrize(
    ("source", "claim", "flag"),
    [
        ("The viaduct was built between 1873 and 1875.", "The viaduct was built in 1873-78.", "wrong-year"),
        ("The locomotive weighs 24 tonnes.", "The locomotive weighs twenty-six tonnes.", "wrong-number"),
        ("The tunnel is 1,200 metres long.", "The tunnel is 1.4 km long.", "wrong-number"),
        (
            "The shop is open from 10:00 to 16:30.",
            "The shop opens at 10am and closes at 5:30pm.",
            "wrong-number",
        ),
        ("The line opened on 14 August 1876.", "The line opened on 14/09/1876.", "wrong-date"),
        ("In 1990, 75 members rebuilt the line.", "In 1990, 85 members rebuilt the line.", "wrong-number"),
        ("The line is 14.5 km long.", "The line is roughly 19 km long.", "wrong-number"),
        ("The viaduct was built between 1873 and 1875.", "The viaduct was built around 1895.", "wrong-year"),
    ],
    ids=[
        "year-range",
        "number-words",
        "km-to-metres",
        "twelve-hour-clock",
        "slash-date",
        "not-a-range",
        "rounded-too-far",
        "about-another-year",
    ],
)
def test_a_different_figure_written_another_way_is_still_caught(source: str, claim: str, flag: str) -> None:
    sources = [Source(1, source)]
    [vote] = judge(claim, sources)
    check_vote(vote, sources)
    assert vote.status in NOT_SUPPORTED and flag in vote.flags


def test_correcting_a_false_premise_is_not_a_wrong_place() -> None:
    # "... in Millbridge, not Ashcombe" is what an answer says to a question that assumed Ashcombe.
    sources = [Source(1, "The museum opened in Millbridge in 1994.")]
    [vote] = judge("The museum opened in 1994 in Millbridge, not Ashcombe.", sources)
    check_vote(vote, sources)
    assert vote.status != "contradicted"
    assert not {"wrong-name", "wrong-place"} & set(vote.flags)


def test_a_negated_claim_is_not_verified() -> None:
    sources = [Source(1, "The community garden is open to visitors every weekend during the summer.")]
    [vote] = judge("The community garden is not open to visitors during the summer.", sources)
    check_vote(vote, sources)
    assert vote.status in NOT_SUPPORTED
    assert "negation" in vote.flags


def test_support_only_in_a_superseded_revision_is_outdated() -> None:
    sources = [
        Source(1, "The herb garden is managed by Alice Moreau.", superseded=True),
        Source(2, "Opening hours are from nine to five on weekdays."),
    ]
    [vote] = judge("The herb garden is managed by Alice Moreau.", sources)
    check_vote(vote, sources)
    assert vote.status == "outdated"
    assert vote.source_index == 1
    assert vote.quote == "The herb garden is managed by Alice Moreau."


def test_a_current_source_wins_over_a_superseded_one() -> None:
    sources = [Source(1, EIFFEL, superseded=True), Source(2, EIFFEL)]
    [vote] = judge(EIFFEL, sources)
    assert vote.status == "verified"
    assert vote.source_index == 2


def test_citing_the_wrong_source_is_misattributed() -> None:
    sources = [Source(1, EIFFEL), Source(2, COLOSSEUM)]
    votes = judge(
        "The Eiffel Tower opened in Paris in 1889 [1]. The Colosseum is in the centre of Rome [1].", sources
    )
    for vote in votes:
        check_vote(vote, sources)
    assert votes[0].status == "verified"
    assert votes[0].source_index == 1
    assert votes[1].status == "misattributed"
    assert votes[1].source_index == 2
    assert votes[1].quote in COLOSSEUM


def test_claims_without_any_basis_are_unverified() -> None:
    sources = [Source(1, EIFFEL), Source(2, COLOSSEUM)]
    [vote] = judge("Penguins are excellent swimmers that live mostly in the Southern Hemisphere.", sources)
    check_vote(vote, sources)
    assert vote.status == "unverified"
    assert "not-in-sources" in vote.flags


def test_meta_statements_get_no_vote_and_quotes_stay_verbatim() -> None:
    sources = [Source(1, EIFFEL + " It is 330 metres tall."), Source(2, COLOSSEUM)]
    text = "Great question! The Eiffel Tower opened in Paris [1]. It was finished around 80 AD [2]. I hope this helps."
    votes = judge(text, sources)
    assert len(votes) == 2
    for vote in votes:
        check_vote(vote, sources)
        assert vote.quote, "a supported claim shows its quote"


def test_judge_text_gives_an_item_level_outcome() -> None:
    good = judge_text(EIFFEL, [EIFFEL])
    bad = judge_text("The Eiffel Tower opened in Madrid in 1923.", [EIFFEL])
    assert good.supported and not bad.supported
    assert good.probability > bad.probability
    assert [c.is_claim for c in good.claims] == [True]


def test_no_sources_means_unverified() -> None:
    [vote] = judge(EIFFEL, [])
    assert vote.status == "unverified"
    assert vote.source_index is None
