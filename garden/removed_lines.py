"""A superseded revision as readers who are not editors see it: its lines that the current version still holds,
and in place of each run of lines removed since, one `REMOVED_LINES` line. History keeps a removed line for
editors and the `outdated` check (docs/security.md), as git's does, not for every reader of the page."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

REMOVED_LINES = "(Lines removed since this revision are shown to editors only.)"


class _Passage(Protocol):
    @property
    def pk(self) -> int: ...
    @property
    def page(self) -> int | None: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class PassageShown:
    """A passage as its revision's page renders it: `pk` for its `#passage-` anchor, `page` for a PDF's."""

    pk: int
    page: int | None
    text: str


def lines_removed_hidden(text: str, current: set[str]) -> str:
    """`text` with each run of its lines not in `current` (lines stripped of surrounding space) as one
    REMOVED_LINES paragraph; blank lines are kept."""
    shown: list[str] = []
    removing = False
    for line in text.split("\n"):
        if not line.strip() or line.strip() in current:
            shown.append(line)
            removing = False
        elif not removing:
            shown.extend(["", REMOVED_LINES, ""])
            removing = True
    return "\n".join(shown)


def passages_without_removed(passages: Iterable[_Passage], current: Iterable[_Passage]) -> list[PassageShown]:
    """`passages` (of a superseded revision) with the lines that none of `current` (the current revision's
    passages) holds hidden (`lines_removed_hidden`)."""
    kept = {line.strip() for passage in current for line in passage.text.split("\n") if line.strip()}
    return [PassageShown(p.pk, p.page, lines_removed_hidden(p.text, kept)) for p in passages]
