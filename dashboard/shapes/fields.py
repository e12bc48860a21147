"""What the shapes share: the fields only the pages show, the words the schema documents, rounding and labels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

PAGE_ONLY = Field(exclude=True)
ANSWERS_QUESTION_RULE = (
    "Whether the answer answers its question: it is not refused, not an abstention and not failed, and its "
    "verification, once finished, did not find that its claims only say what is near the question (a grounded "
    "answer that does not answer is never labelled ✓)."
)
ANSWERS_QUESTION_LABEL = '"Answers the question" or "Does not answer the question", as the page says.'
CITED_AS = 'How the source is cited: its title, with its page for a PDF ("Hive care, p. 2").'


def rounded(score: float) -> float:
    return round(score, 4)


def label(vocabulary: Callable[[str], Any], value: str) -> str:
    """A stored value's label in its vocabulary (a model's choices or the engine's words), or the value itself
    when it is none of its words (as `get_FOO_display`)."""
    try:
        return str(vocabulary(value).label)
    except ValueError:
        return value
