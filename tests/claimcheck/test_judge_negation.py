"""The local judge reads a negation in its clause: "never in spring ...; in late September instead" states
September and denies spring. Each pair: the statement the source makes (verified) and its reversal
(contradicted)."""

from __future__ import annotations

import pytest

from claimcheck.claims import split_claims
from claimcheck.judges.local import judge_claims
from claimcheck.judges.types import Ruling, Source
from claimcheck.terms import ClaimStatus, Flag

HEDGES = (
    "The hedges along the lane are never cut in spring, because birds nest in them then; "
    "they are cut in late September instead."
)


pytestmark = pytest.mark.usefixtures("judge_on_one_thread")


def judge(text: str, source: str) -> Ruling:
    [vote] = judge_claims(split_claims(text), [Source(1, source)])
    assert vote.quote in source
    return vote


# (source, what it states, the reversal of what it denies or states)
PAIRS = [
    pytest.param(
        HEDGES, "The hedges are cut in late September.", "The hedges are cut in spring.", id="issue"
    ),
    pytest.param(
        HEDGES,
        "The hedges are not cut in spring.",
        "The hedges are never cut in late September.",
        id="issue-denied",
    ),
    pytest.param(
        "The ferry does not run in winter; it runs from April to October.",
        "The ferry runs from April to October.",
        "The ferry runs in winter.",
        id="ferry",
    ),
    pytest.param(
        "The ferry does not run in winter; it runs from April to October.",
        "The ferry does not run in winter.",
        "The ferry does not run from April to October.",
        id="ferry-denied",
    ),
    pytest.param(
        "The footpath is not suitable for wheelchairs, but the lower track is.",
        "The lower track is suitable for wheelchairs.",
        "The footpath is suitable for wheelchairs.",
        id="but-the-other-is",
    ),
    pytest.param(
        "Dogs are not allowed in the walled garden; they are welcome in the orchard.",
        "Dogs are welcome in the orchard.",
        "Dogs are allowed in the walled garden.",
        id="dogs",
    ),
    pytest.param(
        "The bridge was never rebuilt after the flood of 1901; a ferry replaced it instead.",
        "A ferry replaced the bridge.",
        "The bridge was rebuilt after the flood of 1901.",
        id="never-rebuilt",
    ),
    pytest.param(
        "The well was not dug by the monks; it was dug by the Roman garrison.",
        "The well was dug by the Roman garrison.",
        "The well was dug by the monks.",
        id="not-by-but-by",
    ),
    pytest.param(
        "The wool is dyed with madder rather than indigo.",
        "The wool is dyed with madder.",
        "The wool is dyed with indigo.",
        id="rather-than",
    ),
    pytest.param(
        "Visitors pay at the gate instead of booking online.",
        "Visitors pay at the gate.",
        "Visitors book online.",
        id="instead-of",
    ),
    pytest.param(
        "The orchard is no longer sprayed; ladybirds keep the aphids down.",
        "Ladybirds keep the aphids down in the orchard.",
        "The orchard is sprayed.",
        id="no-longer",
    ),
    pytest.param(
        "Trains do not stop at Fellside on Sundays, but they stop there every hour on weekdays.",
        "Trains stop at Fellside every hour on weekdays.",
        "Trains stop at Fellside on Sundays.",
        id="sundays",
    ),
    pytest.param(
        "The library does not lend its maps, which must be read in the reading room.",
        "The maps must be read in the reading room.",
        "The library lends its maps.",
        id="which-clause",
    ),
    pytest.param(
        "Cattle never graze the upper meadow, which is cut for hay in July.",
        "The upper meadow is cut for hay in July.",
        "Cattle graze the upper meadow.",
        id="which-the-object",
    ),
    pytest.param(
        "The castle is not open on Mondays; it opens every other day from ten.",
        "The castle opens every other day from ten.",
        "The castle is open on Mondays.",
        id="castle",
    ),
    pytest.param(
        "The mill no longer grinds flour; it now generates electricity.",
        "The mill now generates electricity.",
        "The mill grinds flour.",
        id="no-longer-now",
    ),
    pytest.param(
        "The chapel has no organ; the hymns are sung to a harmonium.",
        "The hymns are sung to a harmonium.",
        "The chapel has an organ.",
        id="no-organ",
    ),
]


@pytest.mark.parametrize(("source", "stated", "reversed_"), PAIRS)
def test_a_negation_verifies_what_it_leaves_standing_and_contradicts_its_reversal(
    source: str, stated: str, reversed_: str
) -> None:
    kept = judge(stated, source)
    assert kept.status == ClaimStatus.VERIFIED, kept
    assert Flag.NEGATION not in kept.flags
    turned = judge(reversed_, source)
    assert turned.status == ClaimStatus.CONTRADICTED, turned
    assert Flag.NEGATION in turned.flags


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        ("The mill was not only a workplace but also a school.", "The mill was a workplace."),
        (
            "The museum opened in Millbridge in 1994.",
            "The museum opened in 1994 in Millbridge, not Ashcombe.",
        ),
        (
            "Aaron Sorkin based his screenplay on a book, so everything seen isn't necessarily true.",
            "The screenplay was based on a book.",
        ),
    ],
    ids=["not-only", "not-the-other-place", "a-negation-further-on"],
)
def test_a_negation_that_denies_something_else_reverses_nothing(source: str, claim: str) -> None:
    assert judge(claim, source).status != ClaimStatus.CONTRADICTED
