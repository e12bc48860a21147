"""Names in a question: topic titles, aliases and theme keywords found as whole words, in one indexed lookup.

A topic's names are stored as keys (`Topic.phrases`, GIN-indexed); a question is cut into every run of whole
words that a name could be (`question_phrases`), and PostgreSQL finds the topics holding any of them. The cost
follows the question's length, not the number of topics. A name matches where it stands in the question with no
word character touching it on either side, in any case, as `(?<!\\w)name(?!\\w)` would. Pure: no database.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from garden.vocabulary import NAME_TITLE_LIMIT

_WORD = re.compile(r"\w+")
MARKS_AT_EDGE = 3
_PUNCTUATION = re.compile(r"[^\w\s]+")


def phrase_key(name: str) -> str:
    """How a name is stored and looked up: as written, trimmed, in lower case."""
    return name.strip().lower()


def phrase_keys(names: Iterable[str]) -> list[str]:
    return sorted({key for key in map(phrase_key, names) if key})


def question_phrases(question: str, longest: int = NAME_TITLE_LIMIT) -> list[str]:
    """Every stretch of `question` (lower case) that starts and ends at a word's edge, or at the edge of a run
    of marks, or up to MARKS_AT_EDGE marks from a word (`c++`, `.net`), and has no word character just outside
    it: all a stored name could match. None longer than `longest` characters (no name is)."""
    text = question.lower()
    words = list(_WORD.finditer(text))
    starts: set[int] = set()
    ends: set[int] = set()
    for word in words:
        starts.add(word.start())
        ends.add(word.end())
    for mark in _PUNCTUATION.finditer(text):
        # A name may start or end with a few marks, inside a run of them (`.net` in `-.net`, `c++` in `c++,`);
        # more would only multiply the stretches of a run of brackets, and no name is like that.
        a, b = mark.start(), mark.end()
        starts.update({a, *range(max(a, b - MARKS_AT_EDGE), b)})
        ends.update({b, *range(a + 1, min(b, a + MARKS_AT_EDGE) + 1)})
    edges_start = sorted(s for s in starts if s == 0 or not _is_word(text[s - 1]))
    edges_end = sorted(e for e in ends if e == len(text) or not _is_word(text[e]))
    found: set[str] = set()
    for start in edges_start:
        for end in edges_end[bisect.bisect_right(edges_end, start) :]:
            if end - start > longest:
                break
            found.add(text[start:end])
    return sorted(found)


def _is_word(char: str) -> bool:
    return _WORD.match(char) is not None
