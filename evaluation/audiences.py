"""Verify-all per audience: who a run asks its golden questions as, and which questions are out of scope for it.

A run is asked as one audience (`VerifyRun.audience`; empty: the default audience, as a visitor who is not
signed in); a golden question naming its own audience (`audience:` in the golden file) is asked as that one
whatever the run's. A question whose expected notes are all of audiences it was not asked as is one another
audience could answer: out of scope for the run, so it must be refused, and the report counts it so.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from garden.errors import UserFacingError
from garden.models import Article, Audience
from garden.readers import ANONYMOUS, Reader

UNKNOWN_AUDIENCE = "There is no audience named “{name}”: no run was started. The audiences are: {known}."
NO_AUDIENCES = "none yet"
DIFFERENT_AUDIENCES = (
    "These runs were asked as different audiences: {first} and {second}; their figures are not comparable."
)


class UnknownAudience(UserFacingError):
    """A run was asked to be started as an audience the garden does not have."""


def audience_named(name: str) -> str:
    """An audience as pages, exports and the command say it: the default one by its name,
    `GARDEN_DEFAULT_AUDIENCE` ("everyone")."""
    return name or settings.GARDEN_DEFAULT_AUDIENCE


def audience_check(name: str) -> str:
    """`name` (stripped) when it is an audience of the garden, or empty for the default one (empty or named);
    raises `UnknownAudience`, naming those there are, otherwise."""
    name = name.strip()
    if name == settings.GARDEN_DEFAULT_AUDIENCE:
        return ""
    if name and not Audience.objects.filter(name=name).exists():
        known = ", ".join(Audience.objects.values_list("name", flat=True)) or NO_AUDIENCES
        raise UnknownAudience(UNKNOWN_AUDIENCE.format(name=name, known=known))
    return name


def asked_as(run_audience: str, question_audience: str) -> str:
    """The audience a golden question is asked as in a run: its own when it names one, else the run's."""
    return question_audience or run_audience


def reader_as(audience: str) -> Reader:
    """The reader asking as `audience`: a member of it alone, or the visitor not signed in for the default."""
    return Reader(audiences=frozenset({audience})) if audience else ANONYMOUS


def beyond_audience(expected_articles: Sequence[str], reader: Reader) -> bool:
    """Whether another audience could answer the question but `reader` cannot: its expected notes are in the
    garden and every one of them is written for audiences `reader` is in none of."""
    written_for = list(Article.objects.filter(slug__in=expected_articles).values_list("audiences", flat=True))
    return bool(written_for) and not any(reader.may_read(audiences) for audiences in written_for)


def audiences_differ(first: str, second: str) -> str | None:
    """What the comparison of two runs says when they were asked as different audiences; None when the same."""
    if first == second:
        return None
    return DIFFERENT_AUDIENCES.format(first=audience_named(first), second=audience_named(second))
