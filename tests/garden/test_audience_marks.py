"""A note's audiences as written in its front matter or page properties; a wrong one fails closed."""

from __future__ import annotations

from garden.audience_marks import AUDIENCE_WRONG, AudienceMark, audience_mark


def test_no_audience_is_the_default() -> None:
    assert audience_mark({"title": "Lunch"}) == AudienceMark()


def test_a_name_or_a_list() -> None:
    assert audience_mark({"audience": "HR"}).names == ("hr",)
    assert audience_mark({"Audiences": ["board", "hr"]}).names == ("board", "hr")
    assert audience_mark({"audience": "hr, board"}).names == ("board", "hr")
    assert audience_mark({"audience::": "x"}) == AudienceMark()


def test_a_wrong_value_fails_closed() -> None:
    mark = audience_mark({"audience": {"team": "hr"}})
    assert mark.names == ()
    assert mark.error == AUDIENCE_WRONG.format(value={"team": "hr"})
    assert audience_mark({"audiences": [3]}).error is not None
    assert audience_mark({"audience": ""}).error is not None
