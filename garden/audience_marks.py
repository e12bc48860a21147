"""How a note's audiences are written, read in one place that every format calls.

A note names its audiences in its front matter (`audience:` or `audiences:`) or, in Logseq, its `audience::` page
property: a name or a list of names. A note naming none is for the default audience (everyone the site lets in).
A value that is not a name or a list of names fails closed: the note is to be withheld, and the message says why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.text import slugify

AUDIENCE_KEYS = ("audience", "audiences")
AUDIENCE_WRONG = (
    "its audience is written wrongly ({value!r}): write a name or a list of names, e.g. `audience: hr` or "
    "`audiences: [hr, board]`; the note is withheld until it is fixed"
)


@dataclass(frozen=True)
class AudienceMark:
    """The audiences a note names (empty: the default audience), or why they could not be read."""

    names: tuple[str, ...] = ()
    error: str | None = None


def _one(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    name = slugify(value.strip().strip("[]"), allow_unicode=True)
    return name or None


def audience_mark(meta: Mapping[Any, Any]) -> AudienceMark:
    """Read `audience:`/`audiences:` (any case) from a note's front matter or page properties."""
    names: list[str] = []
    for key, value in meta.items():
        if not isinstance(key, str) or key.strip().lower() not in AUDIENCE_KEYS:
            continue
        values = (
            value if isinstance(value, list) else str(value).split(",") if isinstance(value, str) else [value]
        )
        for item in values:
            name = _one(item)
            if name is None:
                return AudienceMark(error=AUDIENCE_WRONG.format(value=value))
            names.append(name)
    return AudienceMark(names=tuple(sorted(set(names))))
