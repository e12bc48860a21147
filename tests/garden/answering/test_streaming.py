"""What of an answer being written may be shown: never half a citation, half an escape, or trailing space."""

import pytest

from garden.answering.streaming import ShownText


def shown(pieces: list[str], original: str = "") -> list[str]:
    text = ShownText(original)
    return [text.feed(piece) for piece in pieces] + [text.rest()]


def test_a_citation_is_held_back_until_its_number_is_complete() -> None:
    assert shown(["It is long [", "1", "2", "]. More"]) == ["It is long ", "", "", "[12]. More", ""]


def test_a_bracket_that_is_no_citation_is_shown_once_it_is_clear() -> None:
    assert shown(["See [", "the map]"]) == ["See ", "[the map]", ""]


def test_joined_the_pieces_are_the_answer_as_stored_stripped() -> None:
    pieces = ["  It ", "is ", "long [1", "].  ", "\n"]
    assert "".join(shown(pieces)) == "It is long [1]."


def test_an_unclosed_citation_at_the_end_is_shown_as_written() -> None:
    assert "".join(shown(["It is long [", "2"])) == "It is long [2"


@pytest.mark.parametrize(
    ("original", "expected"), [("no escapes here", "a < b"), ("a source that writes &lt; itself", "a &lt; b")]
)
def test_an_escaped_lt_is_read_back_as_the_stored_answer_reads_it(original: str, expected: str) -> None:
    assert "".join(shown(["a &", "l", "t; b"], original)) == expected


def test_a_range_of_sources_is_held_back_whole() -> None:
    assert shown(["Both say so [2", "-", "4", "]."]) == ["Both say so ", "", "", "[2-4].", ""]


def test_what_may_still_be_the_models_abstention_is_held_back_and_never_shown() -> None:
    assert shown(["NOT ", "IN THE", " NOTES", "."]) == ["", "", "", "", ""]
    assert shown(["Not ", "until 1902 [1]."]) == ["", "Not until 1902 [1].", ""]


def test_a_reply_that_begins_with_the_abstentions_words_and_goes_on_is_shown() -> None:
    pieces = ["Not in the notes", " on the station, but the footbridge dates from 1902 [1]."]
    assert shown(pieces) == [
        "",
        "Not in the notes on the station, but the footbridge dates from 1902 [1].",
        "",
    ]
