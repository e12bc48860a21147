"""The quote gate: quotes are looked up verbatim, then fuzzily; invented ones fall to unverified, and so do
ones that are in their source but not about the claim, whatever status shows them."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from rapidfuzz import fuzz

from claimcheck.judges.types import Ruling, Source
from claimcheck.quote_gate import carries_claim, check_quote, gate_vote, quote_passed
from claimcheck.terms import Flag

BRIDGE = (
    "In the spring of 1932 the old stone bridge over the Wear was opened to traffic by the mayor.\n"
    "It was  \u201cthe longest\u201d span in the county \u2014 at 120 metres.  It was not built of iron."
)
MILL = "The water mill at Ashby ground corn until 1911, when a steam mill replaced it."
SOURCES = {1: Source(1, BRIDGE), 2: Source(2, MILL)}
BRIDGE_CLAIM = "The bridge over the Wear opened to traffic in 1932."
MILL_CLAIM = "The water mill at Ashby ground corn until 1911."


def vote(status: str, quote: str, source_index: int | None, flags: tuple[str, ...] = ()) -> Ruling:
    return Ruling(status=status, quote=quote, source_index=source_index, confidence=0.8, flags=flags)


def test_exact_quote_is_found_at_its_offsets() -> None:
    quote = "the old stone bridge over the Wear was opened to traffic"
    check = check_quote(quote, BRIDGE)
    assert check.found and check.exact and check.score == 100.0
    assert check.start == BRIDGE.index(quote) and check.text == quote


def test_whitespace_curly_quotes_and_dashes_are_normalised_and_the_original_span_returned() -> None:
    check = check_quote('It was "the longest" span in the county - at 120 metres.', BRIDGE)
    assert check.found and check.exact
    assert check.text == "It was  \u201cthe longest\u201d span in the county \u2014 at 120 metres."
    assert BRIDGE[check.start : check.end] == check.text


def test_one_typo_is_matched_fuzzily_and_the_exact_source_span_returned() -> None:
    check = check_quote("the old stone bridge over the Wear was opend to traffic", BRIDGE)
    assert check.found and not check.exact and check.score >= 90
    assert check.text == "the old stone bridge over the Wear was opened to traffic"


def test_a_changed_number_or_a_dropped_negation_is_not_a_typo() -> None:
    assert not check_quote("In the spring of 1923 the old stone bridge over the Wear", BRIDGE).found
    assert not check_quote("It was built of iron, at 120 metres.", BRIDGE).found


LINKED = (
    "The viaduct was designed by the company engineer, [[josiah-fenwick|Josiah Fenwick]], and built by "
    "[Thomas Brannock & Co.](https://example.org/brannock) between 1873 and 1875, like the [[cold-knap-tunnel]]."
)


@pytest.mark.parametrize(
    "quote",
    [
        "The viaduct was designed by the company engineer, Josiah Fenwick, and built by Thomas Brannock & Co. "
        "between 1873 and 1875",
        "built by Thomas Brannock & Co. between 1873 and 1875, like the cold-knap-tunnel.",
        "designed by the company engineer, [[josiah-fenwick|Josiah Fenwick]], and built",
        "designed by the company engineer, Josiah Fenwick",
    ],
    ids=["rendered-links", "bare-wikilink", "copied-markup", "link-at-the-end"],
)
def test_a_quote_of_the_text_as_a_reader_sees_it_is_found_in_its_markdown(quote: str) -> None:
    # Articles are Markdown; a judge may quote a link as it reads ("Josiah Fenwick") or as it is written.
    check = check_quote(quote, LINKED)
    assert check.found and check.exact
    assert check.text == LINKED[check.start : check.end]
    assert check.text.count("[") == check.text.count("]")  # no link cut in half


def test_a_changed_figure_beside_a_link_is_still_not_found() -> None:
    quote = "designed by the company engineer, Josiah Fenwick, and built by Thomas Brannock & Co. between 1873 and 1876"
    assert not check_quote(quote, LINKED).found


def test_empty_and_short_quotes_must_be_verbatim() -> None:
    assert not check_quote("", BRIDGE).found
    assert not check_quote("   ", BRIDGE).found
    assert check_quote("1932", BRIDGE).found
    assert not check_quote("the Wearr", BRIDGE).found


def test_invented_quote_falls_to_unverified_keeping_quote_and_confidence() -> None:
    invented = "The bridge was designed by Isambard Kingdom Brunel in 1930."
    gated = gate_vote(vote("verified", invented, 1, ("wrong-year",)), SOURCES, claim=BRIDGE_CLAIM)
    assert gated.status == "unverified"
    assert gated.quote == invented and gated.confidence == 0.8 and gated.source_index == 1
    assert gated.flags == ("wrong-year", Flag.QUOTE_NOT_FOUND)


def test_quote_from_another_source_than_the_one_named_is_not_found() -> None:
    gated = gate_vote(vote("contradicted", "ground corn until 1911", 1), SOURCES, claim=MILL_CLAIM)
    assert gated.status == "unverified" and Flag.QUOTE_NOT_FOUND in gated.flags


def test_quote_attributed_to_a_source_that_does_not_exist_falls_to_unverified() -> None:
    gated = gate_vote(vote("misattributed", "ground corn until 1911", 7), SOURCES, claim=MILL_CLAIM)
    assert gated.status == "unverified" and gated.flags == (Flag.QUOTE_NOT_FOUND,)
    assert gated.source_index is None and gated.quote == "ground corn until 1911"
    inferred = gate_vote(vote("inferred", "ground corn until 1911", None), SOURCES, claim=MILL_CLAIM)
    assert inferred.status == "unverified"


@pytest.mark.parametrize("status", ["verified", "inferred", "outdated", "misattributed", "contradicted"])
def test_a_found_quote_keeps_the_status_and_a_fuzzy_one_is_replaced_by_the_source_span(status: str) -> None:
    assert gate_vote(vote(status, "ground corn until 1911", 2), SOURCES, claim=MILL_CLAIM) == vote(
        status, "ground corn until 1911", 2
    )
    misquoted = vote(status, "The water mill at Ashby ground korn until 1911", 2)
    gated = gate_vote(misquoted, SOURCES, claim=MILL_CLAIM)
    assert gated == vote(status, "The water mill at Ashby ground corn until 1911", 2)


@pytest.mark.parametrize(
    "quote", ["", "ground corn until 1911", "The water mill at Ashby ground korn until 1911"]
)
def test_an_unverified_vote_with_no_quote_or_one_from_its_source_passes_unchanged(quote: str) -> None:
    original = vote("unverified", quote, 2, ("not-in-sources",))
    assert gate_vote(original, SOURCES, claim="The mill closed in 1920.") is original


def test_an_unverified_vote_with_an_invented_quote_keeps_its_status_but_its_quote_does_not_pass() -> None:
    # Before, an unverified vote passed the gate unchecked, so an invented quote on it reached readers.
    invented = "Call 0800 555 0199 to hear the real opening date."
    gated = gate_vote(vote("unverified", invented, 5, ("not-in-sources",)), SOURCES, claim=BRIDGE_CLAIM)
    assert gated.status == "unverified" and gated.quote == invented and gated.confidence == 0.8
    assert gated.flags == ("not-in-sources", Flag.QUOTE_NOT_FOUND) and gated.source_index is None
    assert not quote_passed(gated.flags)


LENGTH_CLAIM = "The bridge over the Wear is 120 metres long."


@pytest.mark.parametrize(
    ("quote", "claim"),
    [
        ("the", BRIDGE_CLAIM),
        ("1932", BRIDGE_CLAIM),
        ("120", LENGTH_CLAIM),
        # Another sentence of the same source: the subject and its river, but not the length the claim states.
        (
            "In the spring of 1932 the old stone bridge over the Wear was opened to traffic by the mayor.",
            LENGTH_CLAIM,
        ),
        ("It was not built of iron.", LENGTH_CLAIM),
        # The right sentence, cut short of the year the claim states.
        ("the old stone bridge over the Wear was opened to traffic", BRIDGE_CLAIM),
    ],
    ids=[
        "the",
        "a-lone-year",
        "a-lone-number",
        "wrong-sentence",
        "wrong-sentence-no-shared-word",
        "without-the-claims-year",
    ],
)
@pytest.mark.parametrize("status", ["verified", "outdated"])
def test_a_quote_in_its_source_that_does_not_carry_the_claim_is_no_support(
    quote: str, claim: str, status: str
) -> None:
    source = 1 if quote in BRIDGE else 2
    assert check_quote(quote, SOURCES[source].text).found  # the quote is there: only what it says is wrong
    gated = gate_vote(vote(status, quote, source, ("partial",)), SOURCES, claim=claim)
    assert gated.status == "unverified" and gated.quote == quote and gated.source_index == source
    assert gated.flags == ("partial", Flag.QUOTE_MISSES_CLAIM) and gated.confidence == 0.8
    assert not quote_passed(gated.flags)


@pytest.mark.parametrize(
    ("quote", "claim"),
    [
        ("at 120 metres", LENGTH_CLAIM),  # a figure and its unit
        ("Josiah Fenwick", "The viaduct was designed by Josiah Fenwick [1]."),  # the name the claim states
        ("In the spring of 1932 the old stone bridge over the Wear was opened", BRIDGE_CLAIM),
        ("1932 the old stone bridge", "The bridge opened in 1932."),
        ("It was not built of iron.", "The bridge was not built of iron."),
        (
            "ground corn until 1911, when a steam mill replaced it",
            "A steam mill replaced the Ashby mill in 1911.",
        ),
    ],
    ids=[
        "figure-and-unit",
        "name",
        "part-of-the-sentence",
        "year-and-subject",
        "negation",
        "clause-reordered",
    ],
)
def test_a_genuine_supporting_quote_still_passes_short_or_long(quote: str, claim: str) -> None:
    sources = {**SOURCES, 3: Source(3, LINKED)}
    source = next(n for n, s in sources.items() if check_quote(quote, s.text).found)
    gated = gate_vote(vote("verified", quote, source), sources, claim=claim)
    assert gated.status == "verified" and gated.flags == () and quote_passed(gated.flags)


def test_a_figure_written_in_words_in_the_quote_is_the_claims_figure() -> None:
    assert carries_claim("Its twenty-one arches carry the line", "The viaduct has 21 arches.")
    assert not carries_claim("Its twenty-two arches carry the line", "The viaduct has 21 arches.")


def test_a_contradicting_quote_need_not_hold_the_claims_figure() -> None:
    # It shows what the source says instead: another year is the point.
    contradicted = vote("contradicted", "In the spring of 1932 the old stone bridge", 1)
    claim = "The bridge opened in 1923."
    assert gate_vote(contradicted, SOURCES, claim=claim) == contradicted


def test_the_gate_costs_a_few_fuzzy_scans_per_vote() -> None:
    """Timed against rapidfuzz's own scan of the same quotes in the same run (best of five, so another
    process's burst does not count): the gate's work is a small multiple of one scan per vote (about 12x here),
    not a scan per window, whatever the machine's speed."""
    texts = [
        f"Article {n}. " + " ".join(f"word{n}x{i} stands for item {i}." for i in range(30)) for n in range(8)
    ]
    sources = {n: Source(n, text[:600]) for n, text in enumerate(texts)}
    quotes = {n: sources[n].text[200:280].replace("item", "iten", 1) for n in sources}
    votes = [vote("verified", quote, n) for n, quote in quotes.items()]

    def best_of_five(work: Callable[[], object]) -> float:
        timings = []
        for _ in range(5):
            started = time.perf_counter()
            work()
            timings.append(time.perf_counter() - started)
        return min(timings)

    gate = best_of_five(lambda: [gate_vote(v, sources, claim=v.quote) for v in votes])
    scan = best_of_five(
        lambda: [fuzz.partial_ratio_alignment(quote, sources[n].text) for n, quote in quotes.items()]
    )
    assert all(gate_vote(v, sources, claim=v.quote).status == "verified" for v in votes)
    assert gate < 100 * scan, (gate, scan)


SHOWING_A_QUOTE = ["verified", "inferred", "outdated", "misattributed", "contradicted"]


@pytest.mark.parametrize("status", SHOWING_A_QUOTE)
def test_a_quote_of_only_the_is_no_basis_for_any_status(status: str) -> None:
    # "the" is in the source, so only what the quote says can turn it down: before, an inferred, misattributed
    # or contradicted vote quoting it reached readers with "the" as its quote.
    gated = gate_vote(vote(status, "the", 1, ("partial",)), SOURCES, claim=BRIDGE_CLAIM)
    assert gated.status == "unverified" and gated.quote == "the" and gated.source_index == 1
    assert gated.flags == ("partial", Flag.QUOTE_MISSES_CLAIM) and gated.confidence == 0.8
    assert not quote_passed(gated.flags)


@pytest.mark.parametrize(
    ("quote", "claim"),
    [
        ("bridge", BRIDGE_CLAIM),
        ("1932", BRIDGE_CLAIM),
        # The claim's own source, but the sentence goes on to what replaced the claim's mill.
        ("when a steam mill replaced it", MILL_CLAIM),
    ],
    ids=["a-lone-word", "a-lone-year", "another-sentence-of-the-source"],
)
def test_an_inferred_vote_needs_a_quote_that_speaks_of_the_claim(quote: str, claim: str) -> None:
    source = 1 if quote in BRIDGE else 2
    gated = gate_vote(vote("inferred", quote, source), SOURCES, claim=claim)
    assert gated.status == "unverified" and gated.flags == (Flag.QUOTE_MISSES_CLAIM,)
    assert not quote_passed(gated.flags)


@pytest.mark.parametrize(
    ("quote", "claim"),
    [
        # The premise names the bridge and its river; the claim's figure is worked out from the quote's year.
        (
            "In the spring of 1932 the old stone bridge over the Wear was opened to traffic by the mayor.",
            "The bridge over the Wear has stood for over 90 years.",
        ),
        ("1932 the old stone bridge", "The bridge has stood for over 90 years."),
        (
            "It was  \u201cthe longest\u201d span in the county",
            "The Wear bridge is longer than any other span in the county.",
        ),
    ],
    ids=["premise-sentence", "premise-year-and-subject", "premise-in-other-words"],
)
def test_a_real_inferred_quote_stands_though_it_would_not_verify_the_claim(quote: str, claim: str) -> None:
    inferred = vote("inferred", quote, 1)
    assert gate_vote(inferred, SOURCES, claim=claim) == inferred  # status, quote and no flag: readers see it
    # The same quote does not state the claim, so as a verified vote's quote it would not stand.
    assert gate_vote(vote("verified", quote, 1), SOURCES, claim=claim).status == "unverified"


@pytest.mark.parametrize(
    ("quote", "claim", "stands"),
    [
        ("It was not built of iron.", "The bridge over the Wear was built of iron.", True),
        (
            "In the spring of 1932 the old stone bridge over the Wear was opened to traffic by the mayor.",
            "The bridge opened in 1923.",
            True,
        ),
        ("at 120 metres", "The bridge over the Wear is 150 metres long.", True),
        # Sentences of the same source about something else: the bridge's length, not its material or year.
        (
            "It was  \u201cthe longest\u201d span in the county",
            "The bridge over the Wear was built of iron.",
            False,
        ),
        (
            "It was  \u201cthe longest\u201d span in the county \u2014 at 120 metres.",
            "The bridge opened in 1923.",
            False,
        ),
        ("1932", "The bridge opened in 1923.", False),  # another year, of nothing in particular
        ("The water mill at Ashby ground corn until 1911", "The bridge opened in 1923.", False),
    ],
    ids=[
        "the-negation",
        "the-other-year",
        "the-other-length",
        "unrelated-sentence",
        "unrelated-sentence-with-a-figure",
        "a-lone-other-year",
        "another-articles-sentence",
    ],
)
def test_a_contradicted_vote_stands_on_the_sentence_that_says_otherwise_only(
    quote: str, claim: str, stands: bool
) -> None:
    source = 1 if check_quote(quote, BRIDGE).found else 2
    contradicted = vote("contradicted", quote, source)
    gated = gate_vote(contradicted, SOURCES, claim=claim)
    if stands:
        assert gated == contradicted and quote_passed(gated.flags)
    else:
        assert gated.status == "unverified" and gated.flags == (Flag.QUOTE_MISSES_CLAIM,)
        assert gated.quote == quote and not quote_passed(gated.flags)


@pytest.mark.parametrize(
    ("quote", "stands"),
    [
        ("The water mill at Ashby ground corn until 1911", True),
        # About the claim's mill, enough to infer from, but without the year it states: another article does not
        # say the claim with these words.
        ("The water mill at Ashby ground corn", False),
        ("when a steam mill replaced it", False),
    ],
    ids=["says-the-claim", "without-the-claims-year", "another-sentence"],
)
def test_a_misattributed_vote_must_quote_another_article_saying_the_claim(quote: str, stands: bool) -> None:
    # The answer cites the bridge (1); the mill article (2) is where the claim would be said.
    claim = "The water mill at Ashby ground corn until 1911 [1]."
    misattributed = vote("misattributed", quote, 2, ("supported-by-other-source",))
    gated = gate_vote(misattributed, SOURCES, claim=claim)
    if stands:
        assert gated == misattributed and quote_passed(gated.flags)
    else:
        assert gated.status == "unverified" and gated.quote == quote and gated.source_index == 2
        assert gated.flags == ("supported-by-other-source", Flag.QUOTE_MISSES_CLAIM)
        assert not quote_passed(gated.flags)
