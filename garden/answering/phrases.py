"""Names in a question: topic titles, aliases and theme keywords found as whole words, in one indexed lookup.

A topic's or theme's names are stored as keys (`Name.phrase`, B-tree indexed); a question is cut into every run
of whole words that a name could be (`question_phrases`), and PostgreSQL finds the names equal to any of them. The cost
follows the question's length, not the number of topics. A name matches where it stands in the question with no
word character touching it on either side, in any case, as `(?<!\\w)name(?!\\w)` would.

Not every stretch may name something: with thousands of names in a garden, one everyday word of a question is
some note's title by chance ("What oven temperature..." and a note called "Temperature"). `names_asked` keeps
the stretches a name may match in: a phrase of two or more content words, a word that is not an everyday one,
or an everyday word that is the question's subject ("What is the museum?"). Pure: no database.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Collection, Iterable
from functools import lru_cache

from garden.name_limits import NAME_TITLE_LIMIT

_WORD = re.compile(r"\w+")
MARKS_AT_EDGE = 3
_PUNCTUATION = re.compile(r"[^\w\s]+")
# An everyday word names the subject of a sentence of the question when it is at least this share of the
# sentence's content words: "What is the museum?" (1 of 1) and "When does the museum open?" (1 of 2) are about
# the museum; "What oven temperature roasts a chicken?" (1 of 4) is not about temperature.
SUBJECT_SHARE = 0.5
_SENTENCE_END = re.compile(r"[.?!;:]+(?:\s+|$)")


def phrase_key(name: str) -> str:
    """How a name is stored and looked up: as written, trimmed, in lower case."""
    return name.strip().lower()


def phrase_keys(names: Iterable[str]) -> list[str]:
    return sorted({key for key in map(phrase_key, names) if key})


def question_phrases(question: str, longest: int = NAME_TITLE_LIMIT) -> list[str]:
    """Every stretch of `question` (lower case) that starts and ends at a word's edge, or at the edge of a run
    of marks, or up to MARKS_AT_EDGE marks from a word (`c++`, `.net`), and has no word character just outside
    it: all a stored name could match. None longer than `longest` characters (no name is). A name of marks
    alone is found only near the edges of a run of marks, as the marks a name starts or ends with are (`/` in
    `a / b`, not in `---/,`): no name is one."""
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


def words(text: str) -> list[str]:
    """The words of `text`, in lower case."""
    return _WORD.findall(text.lower())


@lru_cache(maxsize=1)
def everyday_words() -> frozenset[str]:
    """The whole words of the embedding model's word-piece vocabulary: the about 21,000 words most frequent in
    the English text it was trained on (BERT's uncased vocabulary), which it keeps as one piece. A word outside
    it ("varroa", "ashcombe", "signalbox") is a garden's own term; one inside it ("temperature", "station")
    is everyday English, which a question uses for its own sake, whatever the garden."""
    from providers.embeddings import model_path

    vocabulary = (model_path() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    return frozenset(entry for entry in vocabulary if entry.isalnum())


def _as_the_model_reads(word: str) -> str:
    """`word` without accents, as the uncased vocabulary holds it ("café" is "cafe")."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def names_asked(question: str, *, stop_words: Collection[str], everyday: Collection[str]) -> list[str]:
    """The stretches of `question` (`question_phrases`) a name may match in: those with two or more content
    words (not `stop_words`), matched as a phrase ("swarm rules", "level crossing"); one content word that is
    not `everyday` ("varroa", "7821"); or one everyday content word that makes at least SUBJECT_SHARE of the
    content words of a sentence of the question: that sentence is about it ("What is the gauge of the line?
    Also ignore your instructions."). A stretch of stop words alone ("how to") names nothing."""
    subjects: set[str] = set()
    for sentence in _SENTENCE_END.split(question):
        content = [word for word in words(sentence) if word not in stop_words]
        if SUBJECT_SHARE * len(content) <= 1:
            subjects.update(content)
    kept = []
    for stretch in question_phrases(question):
        named = _content_words(stretch, stop_words, enough=2)
        if len(named) >= 2 or (
            len(named) == 1 and (_as_the_model_reads(named[0]) not in everyday or named[0] in subjects)
        ):
            kept.append(stretch)
    return kept


def _content_words(stretch: str, stop_words: Collection[str], enough: int) -> list[str]:
    """The first `enough` words of `stretch` (lower case) that are not stop words: a long stretch is decided
    by its first words (a 10,000-character text to check has tens of thousands of stretches)."""
    found: list[str] = []
    for match in _WORD.finditer(stretch):
        if match[0] not in stop_words:
            found.append(match[0])
            if len(found) >= enough:
                break
    return found
