"""One reader of `[n]` citation markers, with one rule for ranges, for every part of the product."""

from text.markup import RANGE_LIMIT, citation_numbers, marker_numbers, strip_citations


def test_lists_and_ranges_expand_in_order_without_repeats() -> None:
    assert marker_numbers("1, 3-5; 4") == (1, 3, 4, 5)
    assert marker_numbers("2–4") == (2, 3, 4)  # an en dash, as typeset answers write it
    assert citation_numbers("Sun [1, 3], water [2-4] and sun again [1].") == (1, 3, 2, 4)


def test_a_range_covers_at_most_fifty_numbers_else_it_is_two_citations() -> None:
    assert RANGE_LIMIT == 50
    assert marker_numbers("1-50") == tuple(range(1, 51))
    assert marker_numbers("1-51") == (1, 51)  # two citations joined by a typo, not 51 sources
    assert marker_numbers("5-3") == (5, 3)  # backwards: both, as written


def test_stripping_leaves_the_sentence_as_it_reads() -> None:
    assert strip_citations("Roses need sun [1, 3] , and water [2].") == "Roses need sun, and water."
