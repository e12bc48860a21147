"""An answer streamed as it is written: the events of a streamed question, and what of the text may be shown.

A streamed question gives `delta` events (text to add to what was shown) and then one `answer` event with
the stored answer. The deltas never end inside a citation whose number is not complete (`[1` waits for its
`]`), inside an escaped "<" (`&lt;`) or in space, so a page can link `[n]` as it arrives; joined, they are
the stored answer's text, unless the answer failed (its `error` says why, and its text is empty) or was cut
to its whole sentences at its length limit (the `answer` event has the text to show). A model's abstention
(`ABSTAINS`) is never shown as written: what could still be one is held back, and the abstention's own text is
sent in its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from garden.answering.synthesis import ABSTAINS
from garden.models import Answer
from text.prompts import ESCAPED_LT

# What may still change when more text comes: a citation not yet closed, an escape not yet whole, space.
# (`[2-4]`, `[1; 3]`: the markers `text.markup.MARKER` reads)
_UNFINISHED = re.compile(r"(?:\[[\d\s,;–-]*|&(?:lt?)?|\s+)$")


class AskEventKind(StrEnum):
    DELTA = "delta"
    ANSWER = "answer"


@dataclass(frozen=True)
class AskEvent:
    """One event of a streamed question: text to add (`delta`), or the stored answer (`answer`)."""

    kind: AskEventKind
    text: str = ""
    answer: Answer | None = None


def _may_be_abstention(text: str) -> bool:
    """Whether `text`, all a reply has written so far, may still be the abstention `ABSTAINS` (a start of it, or it
    whole with nothing after but stops): "Not in the notes on the station, but..." is not."""
    written = text.upper().rstrip()
    return ABSTAINS.startswith(written) or (
        written.startswith(ABSTAINS) and not written[len(ABSTAINS) :].strip(" .!")
    )


class ShownText:
    """The text of an answer being written, a piece at a time, as it may be shown: held back where what comes
    next may change it (a partial `[12`, `&l`, trailing space), "&lt;" read back as "<" as the stored answer
    reads it (`text.prompts.unescape_from_prompt`, given the `original` sources' text)."""

    def __init__(self, original: str) -> None:
        self._held = ""
        self._begun = False
        self._may_abstain = True  # all written so far could be the start of `ABSTAINS`
        self._unescape = ESCAPED_LT not in original

    def feed(self, piece: str) -> str:
        """What of the text so far can be shown now that `piece` came (maybe "")."""
        text = self._held + piece
        if not self._begun:
            text = text.lstrip()
            self._begun = bool(text)
        if self._may_abstain:
            if _may_be_abstention(text):
                self._held = text
                return ""
            self._may_abstain = False
        unfinished = _UNFINISHED.search(text)
        cut = unfinished.start() if unfinished else len(text)
        self._held = text[cut:]
        return self._read(text[:cut])

    def rest(self) -> str:
        """At the end: what was held back, but its trailing space (none of an abstention's `ABSTAINS`)."""
        rest, self._held = self._held.rstrip(), ""
        return "" if self._may_abstain else self._read(rest)

    def _read(self, text: str) -> str:
        return text.replace(ESCAPED_LT, "<") if self._unescape else text
