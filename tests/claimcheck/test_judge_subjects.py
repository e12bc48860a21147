"""The local judge checks whose statement a passage is: a quote about another subject supports nothing.

Each pair is a source that speaks of two subjects of one kind, a claim that moves a statement from one to the
other (not verified), and a claim that keeps it where the source says it (verified).
"""

from __future__ import annotations

import pytest

from claimcheck.claims import split_claims
from claimcheck.judges.local import judge_claims, judge_text
from claimcheck.judges.types import Ruling, Source
from claimcheck.terms import ClaimStatus, Flag

STATIONS = "Millbridge station has two platforms and a footbridge. Fellside station has a single platform and a turntable."
ENGINES = "The tank engines are washed out every 30 days; the tender engine every 45 days."


pytestmark = pytest.mark.usefixtures("judge_on_one_thread")


def judge(text: str, sources: list[Source]) -> Ruling:
    [vote] = judge_claims(split_claims(text), sources)
    if vote.quote:
        assert any(vote.quote in s.text for s in sources), "quotes must be verbatim source text"
    return vote


# (source, claim that moves a statement to another subject, the status it must get, claim kept in place)
PAIRS = [
    pytest.param(
        STATIONS,
        "Fellside station has two platforms and a footbridge.",
        ClaimStatus.CONTRADICTED,  # the source gives Fellside a single platform
        "Fellside station has a single platform and a turntable.",
        id="issue-stations",
    ),
    pytest.param(
        ENGINES,
        "The tender engine is washed out every 30 days.",
        ClaimStatus.CONTRADICTED,  # every 45 days, the source says of the tender engine
        "The tender engine is washed out every 45 days.",
        id="issue-engines",
    ),
    pytest.param(
        STATIONS,
        "Fellside station has a footbridge.",
        ClaimStatus.MISATTRIBUTED,  # the footbridge is Millbridge's, not Fellside's
        "Fellside station has a turntable.",
        id="a-thing-without-a-figure",
    ),
    pytest.param(
        ENGINES,
        "The tank engines are washed out every 45 days.",
        ClaimStatus.CONTRADICTED,
        "The tank engines are washed out every 30 days.",
        id="the-other-way-round",
    ),
    pytest.param(
        "Ada Brown founded the choir in 1921. Tom Hale founded the brass band in 1930.",
        "Tom Hale founded the choir.",
        ClaimStatus.MISATTRIBUTED,
        "Tom Hale founded the brass band.",
        id="people",
    ),
    pytest.param(
        "Ada Brown founded the choir in 1921. Tom Hale founded the brass band in 1930.",
        "Tom Hale founded the brass band in 1921.",
        ClaimStatus.CONTRADICTED,  # 1930, the source says of Tom Hale's founding
        "Tom Hale founded the brass band in 1930.",
        id="another-persons-year",
    ),
    pytest.param(
        "The Dunmore reservoir holds 40 million litres. The Ashby reservoir holds 12 million litres.",
        "The Ashby reservoir holds 40 million litres.",
        ClaimStatus.CONTRADICTED,
        "The Ashby reservoir holds 12 million litres.",
        id="quantities-with-units",
    ),
    pytest.param(
        "The engine Lady Margaret was built in 1884 by Hunslet. The engine Sir Tom was built in 1902 by Bagnall.",
        "Sir Tom was built by Hunslet.",
        ClaimStatus.MISATTRIBUTED,
        "Sir Tom was built by Bagnall.",
        id="named-engines",
    ),
    pytest.param(
        "The Summer Fair is held in July. The Harvest Supper is held in October.",
        "The Harvest Supper is held in July.",
        ClaimStatus.CONTRADICTED,
        "The Harvest Supper is held in October.",
        id="months",
    ),
    pytest.param(
        "The north tower is 42 metres tall; the south tower is 38 metres tall.",
        "The south tower is 42 metres tall.",
        ClaimStatus.CONTRADICTED,
        "The south tower is 38 metres tall.",
        id="modifiers-in-one-sentence",
    ),
    pytest.param(
        "Millbridge station opened in 1862. It has a cafe and a bookshop. "
        "Fellside station opened in 1875 and has a waiting room.",
        "Fellside station has a cafe.",
        ClaimStatus.MISATTRIBUTED,  # "It" is Millbridge station
        "Fellside station has a waiting room.",
        id="through-a-pronoun",
    ),
    pytest.param(
        "Swifts arrive in May and leave in August. Swallows arrive in April and stay until September.",
        "Swallows arrive in May.",
        ClaimStatus.CONTRADICTED,
        "Swallows arrive in April.",
        id="birds",
    ),
    pytest.param(
        "Millbridge has two platforms; Fellside has one.",
        "Fellside has two platforms.",
        ClaimStatus.MISATTRIBUTED,
        "Millbridge has two platforms.",
        id="bare-names",
    ),
    pytest.param(
        "The Avon bridge has three arches. The Severn bridge has five arches and a toll house.",
        "The Avon bridge has a toll house.",
        ClaimStatus.MISATTRIBUTED,
        "The Severn bridge has a toll house.",
        id="bridges",
    ),
    pytest.param(
        "The upper pond is 3 metres deep; the lower pond is 5 metres deep.",
        "The lower pond is 3 metres deep.",
        ClaimStatus.CONTRADICTED,
        "The lower pond is 5 metres deep.",
        id="ponds",
    ),
    pytest.param(
        "The locomotive Hercules weighs 42 tons. The locomotive Titan weighs 56 tons.",
        "Titan weighs 42 tons.",
        ClaimStatus.CONTRADICTED,
        "Titan weighs 56 tons.",
        id="engine-weights",
    ),
    pytest.param(
        "The old mill grinds oats. The new mill grinds wheat and barley.",
        "The old mill grinds wheat.",
        ClaimStatus.MISATTRIBUTED,
        "The new mill grinds barley.",
        id="old-and-new",
    ),
]


@pytest.mark.parametrize(("source", "moved", "status", "kept"), PAIRS)
def test_a_statement_moved_to_another_subject_is_not_verified(
    source: str, moved: str, status: ClaimStatus, kept: str
) -> None:
    sources = [Source(1, source)]
    vote = judge(moved, sources)
    assert vote.status == status
    assert Flag.WRONG_SUBJECT in vote.flags
    if status == ClaimStatus.CONTRADICTED:
        assert {Flag.WRONG_NUMBER, Flag.WRONG_YEAR, Flag.WRONG_DATE} & set(vote.flags)
    assert judge(kept, sources).status == ClaimStatus.VERIFIED


def test_the_wrong_subject_quote_shows_the_passage_that_says_otherwise() -> None:
    # The reader sees why: Fellside's own sentence, not the Millbridge one the claim was copied from.
    vote = judge("Fellside station has two platforms and a footbridge.", [Source(1, STATIONS)])
    assert vote.quote == "Fellside station has a single platform and a turntable."
    vote = judge("Fellside station has a footbridge.", [Source(1, STATIONS)])
    assert vote.quote == "Millbridge station has two platforms and a footbridge."


def test_the_subject_may_be_named_in_another_source_than_the_one_that_matches() -> None:
    sources = [
        Source(1, "Millbridge station has two platforms and a footbridge."),
        Source(2, "Fellside station has a single platform and a turntable."),
    ]
    vote = judge("Fellside station has a footbridge [1].", sources)
    assert vote.status == ClaimStatus.MISATTRIBUTED
    assert Flag.WRONG_SUBJECT in vote.flags
    assert judge("Fellside station has a turntable [2].", sources).status == ClaimStatus.VERIFIED


@pytest.mark.parametrize(
    ("text", "context", "claim"),
    [
        (
            "The station has a single platform and a turntable.",
            "Fellside station",
            "Fellside station has a turntable.",
        ),
        (
            "It has a single platform and a turntable.",
            "Stations of the valley line — Fellside",
            "Fellside station has a turntable.",
        ),
        (
            "The engine is washed out every 45 days.",
            "Locomotives — Tender engine",
            "The tender engine is washed out every 45 days.",
        ),
        (
            "Built in 1870, it has a single platform and a turntable.",
            "Fellside station",
            "Fellside station has a single platform.",
        ),
        (
            "It was rebuilt in 1850 and has a peal of eight bells.",
            "Ashford — St Anne's church",
            "St Anne's church was rebuilt in 1850.",
        ),
    ],
    ids=["title", "heading", "lower-case-subject", "pronoun", "heading-path"],
)
def test_a_claim_naming_its_subject_as_the_title_or_heading_does_stays_verified(
    text: str, context: str, claim: str
) -> None:
    vote = judge(claim, [Source(1, text, context=context)])
    assert vote.status == ClaimStatus.VERIFIED
    assert vote.quote == text, "the heading is read, never quoted"


def test_without_the_title_the_same_passage_does_not_name_the_subject() -> None:
    vote = judge(
        "Fellside station has a turntable.", [Source(1, "The station has a single platform and a turntable.")]
    )
    assert vote.status != ClaimStatus.VERIFIED


def test_a_heading_does_not_excuse_a_passage_about_another_subject() -> None:
    source = Source(
        1,
        "Millbridge station has two platforms and a footbridge. The station here has one platform and a turntable.",
        context="Fellside station",
    )
    vote = judge("Fellside station has a footbridge.", [source])
    assert vote.status == ClaimStatus.MISATTRIBUTED
    assert Flag.WRONG_SUBJECT in vote.flags


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        ("Harper and Sons built the mill in 1820.", "The mill was built by Harper and Sons."),
        ("The Beatles formed in Liverpool in 1960. The band split in 1970.", "The Beatles split in 1970."),
        ("Peggy: Maria is looking for a logistician for Saturday.", "Peggy is looking for a logistician."),
        ("Anette: Try Marco Mengoni.\nCaroline: Thanks!", "Anette suggests Marco Mengoni."),
    ],
    ids=["passive", "the-band", "what-a-speaker-says", "imperative"],
)
def test_a_subject_under_another_name_or_role_is_not_another_subject(source: str, claim: str) -> None:
    vote = judge(claim, [Source(1, source)])
    assert Flag.WRONG_SUBJECT not in vote.flags
    assert vote.status in {ClaimStatus.VERIFIED, ClaimStatus.INFERRED}


def test_check_text_sources_without_a_title_keep_working() -> None:
    judged = judge_text("Fellside station has a footbridge.", [STATIONS])
    assert not judged.supported
    assert Flag.WRONG_SUBJECT in judged.votes[0].flags


def test_a_passage_under_its_headings_is_about_the_title_not_the_heading() -> None:
    # A passage keeps its heading lines: "Facilities" heads the section, it is not the station's name.
    text = "# Fellside station\n\n## Facilities\n\nThe station has a single platform and a turntable."
    vote = judge(
        "Fellside station has a turntable.", [Source(1, text, context="Fellside station — Facilities")]
    )
    assert vote.status == ClaimStatus.VERIFIED
    assert vote.quote == "The station has a single platform and a turntable."
    vote = judge(
        "Millbridge station has a turntable.", [Source(1, text, context="Fellside station — Facilities")]
    )
    assert vote.status != ClaimStatus.VERIFIED
