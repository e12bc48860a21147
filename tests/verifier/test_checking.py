"""`sources_check`: a text checked against the sources its caller gives, as the MCP server's `check` does."""

import pytest

from claimcheck.terms import ClaimStatus, JudgeMode
from verifier.checking import SOURCE_EMPTY, SOURCES_COUNT, SOURCES_MAX, CheckError, sources_check

pytestmark = pytest.mark.django_db

SOURCE = "The Eiffel Tower opened in Paris in 1889."


def test_a_wrong_place_and_year_are_caught_against_the_source_given():
    checked = sources_check("The Eiffel Tower opened in Madrid in 1923.", [SOURCE], mode=JudgeMode.LOCAL)
    (ruling,) = checked.outcome.finals
    assert ruling.status in {ClaimStatus.CONTRADICTED, ClaimStatus.UNVERIFIED} and ruling.source_index in {
        1,
        None,
    }


def test_a_right_claim_is_verified_with_its_quote():
    checked = sources_check("The Eiffel Tower opened in Paris in 1889.", [SOURCE], mode=JudgeMode.LOCAL)
    (ruling,) = checked.outcome.finals
    assert ruling.status == ClaimStatus.VERIFIED and ruling.quote in SOURCE and ruling.source_index == 1


@pytest.mark.parametrize(
    ("sources", "message"),
    [
        ([], SOURCES_COUNT.format(limit=SOURCES_MAX)),
        ([SOURCE] * (SOURCES_MAX + 1), SOURCES_COUNT.format(limit=SOURCES_MAX)),
        ([SOURCE, "  "], SOURCE_EMPTY.format(number=2)),
    ],
)
def test_sources_that_cannot_be_checked_against_are_refused_with_why(sources, message):
    with pytest.raises(CheckError) as refused:
        sources_check("The Eiffel Tower opened in Paris in 1889.", sources, mode=JudgeMode.LOCAL)
    assert refused.value.message == message


def test_an_over_long_source_is_refused_before_anything_is_judged(settings):
    settings.CHECK_MAX_CHARS = 50
    with pytest.raises(CheckError, match="source 2 has 51"):
        sources_check("The tower opened in 1889.", [SOURCE, "x" * 51], mode=JudgeMode.LOCAL)
