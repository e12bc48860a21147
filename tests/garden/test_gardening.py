"""Gardening helpers: where a passage sits in its note."""

from text.markup import headings_above

NOTE = """# Stations of the valley line

The line has two stations.

## Millbridge

Two platforms and a footbridge.

## Fellside

### Facilities

A single platform and a turntable.

```
# not a heading: code
```
"""


def test_the_headings_above_a_passage_are_its_section_path_outermost_first() -> None:
    assert headings_above(NOTE, NOTE.index("A single platform")) == [
        "Stations of the valley line",
        "Fellside",
        "Facilities",
    ]
    assert headings_above(NOTE, NOTE.index("Two platforms")) == ["Stations of the valley line", "Millbridge"]


def test_a_passage_that_opens_with_its_headings_is_under_them() -> None:
    assert headings_above(NOTE, NOTE.index("## Fellside")) == [
        "Stations of the valley line",
        "Fellside",
        "Facilities",
    ]
    assert headings_above(NOTE, NOTE.index("## Millbridge")) == ["Stations of the valley line", "Millbridge"]


def test_headings_in_code_and_text_before_any_heading_do_not_count() -> None:
    assert headings_above(NOTE, len(NOTE) - 1)[-1] == "Facilities"
    assert headings_above("Just prose.\n\n# Later", 3) == []


def test_a_passage_that_opens_with_several_headings_is_under_the_last() -> None:
    body = (
        "# Fellside station\n\n## Facilities\n\nThe station has a turntable.\n\n## History\n\nOpened in 1875."
    )
    assert headings_above(body, 0) == ["Fellside station", "Facilities"]
