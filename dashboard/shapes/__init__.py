"""The one shape of an answer and of its verdict: the API returns it (its OpenAPI schema is these classes), the
answer page renders it and `ask --json` prints it.

Plain dataclasses built by `answer_shape` and `verdict_shape` from the models. A field only the pages show (an id
for an anchor, a passage's address, a label) is marked `PAGE_ONLY`: the API neither sends nor documents it.
The class names are the API's schema names; their descriptions are comments, not docstrings, which the schema
would publish.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from dashboard.shapes.answers import AnswerOut
from dashboard.shapes.verdicts import VerdictOut


def shape_json(shape: AnswerOut | VerdictOut) -> dict[str, Any]:
    """The shape as the API sends it: page-only fields left out, values as JSON has them."""
    data: dict[str, Any] = _JSON[type(shape)].dump_python(shape, mode="json")
    return data


_JSON: dict[type, TypeAdapter[Any]] = {AnswerOut: TypeAdapter(AnswerOut), VerdictOut: TypeAdapter(VerdictOut)}
