"""The key words of an expected answer (its names and content words) and whether an answer has them.

The local judge keeps its own stop words (they are an input to its fitted parameters); these, the shared
ones of `text.words` plus this check's extras, are for telling an answer's facts from its glue. Pure Python:
no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from text.words import STOP_WORDS as SHARED_STOP_WORDS
from text.words import word_set

# The shared stop words, more glue, the words of a title or company ("dr", "ltd") and of a count ("number", "years").
STOP_WORDS: Final = (
    SHARED_STOP_WORDS
    | word_set(
        """above across after again against ago almost along also although am among another approximately around
        because before below between both cannot currently doing done down during either even ever every few
        further get gets got having he here hers him however instead itself just least less many more most much
        near nearly neither no nor not now off once one ones only onto other out over per quite rather really
        roughly same several she since some still such theirs them though through today too toward towards under
        until up upon us very via well whether while whose within without yes yet"""
    )
    | word_set("dr mr mrs ms co ltd plc nos number total year years")
)
# A name is present when more than this share of its words are: "Great Western" for "Great Western Railway",
# but not "Cross" (from "level crossing") for "Hollins Cross".
NAME_WORD_SHARE: Final = 0.5
# Suffixes cut to compare words ("hauled" and "hauls", "ventilated" and "ventilation"), and the shortest stem
# each may leave, so "bats" is "bat" but "need" stays whole.
_SUFFIXES: Final = (
    ("ational", 4),
    ("ation", 4),
    ("ating", 4),
    ("ated", 4),
    ("ings", 4),
    ("ing", 4),
    ("ed", 4),
    ("es", 4),
    ("s", 3),
)
# A measure's adjective is its noun: "27 m high" and "a height of 27 m" say the same.
DIMENSIONS: Final = {"high": "height", "tall": "height", "long": "length", "wide": "width", "deep": "depth"}
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


@dataclass(frozen=True)
class Term:
    """A key term of an expected answer: a name (one or more capitalised words) or a content word."""

    text: str
    stems: tuple[str, ...]
    name: bool

    def found_in(self, stems: frozenset[str]) -> bool:
        present = sum(stem in stems for stem in self.stems)
        return present > NAME_WORD_SHARE * len(self.stems) if self.name else present == len(self.stems)


def stem(word: str) -> str:
    """A crude stem, enough to match an answer's words with an expected answer's: lower case, no possessive,
    one suffix and a final "e" cut."""
    word = word.lower().strip("'")
    word = word.removesuffix("'s")
    word = DIMENSIONS.get(word, word)
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix, shortest in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def stems(text: str) -> frozenset[str]:
    """The stems of every word of `text` ("re-erected" is "re" and "erect")."""
    return frozenset(stem(match.group()) for match in _WORD.finditer(text))


def _is_content(word: str) -> bool:
    bare = word.lower().strip("'").removesuffix("'s")
    return len(bare) >= 3 and bare not in STOP_WORDS and not _is_verb_form(word)


def _is_verb_form(word: str) -> bool:
    """A past tense or participle ("returned", "dismantled"): the key words are names and nouns, and a verb is
    what an answer most often puts another way ("came back" for "returned"). "Shed" and "speed" are nouns."""
    return word.islower() and len(word) >= 6 and word.endswith("ed") and not word.endswith("eed")


def key_terms(text: str, *, known: Iterable[str] = ()) -> list[Term]:
    """The names and content words of `text`, each once, leaving out what `known` (stems, e.g. the
    question's) already says: an answer that repeats the question gains nothing from it.

    A name is a run of capitalised words joined only by spaces or "&" ("Corran & Pyke", "Drovers Arms")."""
    known = frozenset(known)
    runs: list[list[re.Match[str]]] = []
    for match in _WORD.finditer(text):
        word = match.group()
        if not _is_content(word):
            runs.append([])
            continue
        previous = runs[-1][-1] if runs and runs[-1] else None
        joined = previous is not None and text[previous.end() : match.start()].strip() in {"", "&"}
        if joined and word[0].isupper() and previous is not None and previous.group()[0].isupper():
            runs[-1].append(match)
        else:
            runs.append([match])
    terms: dict[tuple[str, ...], Term] = {}
    for run in runs:
        if not run:
            continue
        capitalised = run[0].group()[0].isupper()
        kept = tuple(dict.fromkeys(s for s in (stem(m.group()) for m in run) if s not in known))
        if kept:
            written = text[run[0].start() : run[-1].end()]
            terms.setdefault(kept, Term(written, kept, name=capitalised))
    return list(terms.values())
