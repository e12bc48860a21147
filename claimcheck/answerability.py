"""Whether a sentence answers a question: it says what the question takes as given, and gives what it asks for.

A question presupposes a statement: "What unit is measured to determine circuit complexity?" takes as given that
"unit is measured to determine circuit complexity". A sentence that answers it says that statement (and more: the
answer); a sentence near the question that does not say it (another measure, "circuit simplicity", a negation the
question adds) does not answer it, however close its words. The statement is checked by the local judge, the
same one that checks answers' claims, so a question is held to what a claim is held to. A question that asks
for a set kind of answer (a year for "when", a figure for "how many", a price for "how much") is answered only
by a sentence that gives one, and a question that asks what is *not* so only by a sentence that says "not".

Only a question that asks one thing is held to one sentence: a yes/no question, a comparison ("Which is older,
A or B?") and a question that asks two things are answered from several sentences, or with a "no", and no one
sentence says what they take as given; the verdict's claims are checked as ever.

Pure Python and the local judge: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from claimcheck.claims import Sentence, split_claims
from claimcheck.judges.local.judge import judge_claims
from claimcheck.judges.types import Source
from claimcheck.terms import NOT_SUPPORTED, ClaimStatus
from text.answer_kinds import asked_kinds, gives_kind
from text.markup import strip_citations

# Below this probability the local judge does not hold the question's presupposition said by the sentence: the
# sentence is near the question without answering it. A question that asks for a set kind of answer (a year, a
# figure, a time, a person, a reason) is held mostly by that: the sentence must give one, and the judge's word
# need only not be against it. Tuned with `python -m bench --only answerability` on SQuAD 2.0's "Computational
# complexity theory" and the sample garden's golden set, which must not lose an answer it had: docs/performance.md
# has the figures, and the values tried.
PRESUPPOSITION_SUPPORTED: Final = 0.25
PRESUPPOSITION_SUPPORTED_WITH_KIND: Final = 0.02

_WH = r"(?:what|which|who|whom|whose|when|where|why|how)"
# A question's first words that ask for the answer rather than state what is given: a preposition before the
# question word ("In what"), the question word with its measure ("how many", "what year"), and an auxiliary after
# it.
_ASKING = re.compile(
    r"^\s*(?:(?:in|on|at|by|for|from|to|of|with|during|under|after|before|according to)\s+)?"
    rf"(?:{_WH}(?:\s+(?:many|much|long|often|far|old|big|large))?)\b\s*"
    r"(?:(?:year|date|day|time|month|century|decade|kind of|type of|sort of)\b\s*)?"
    r"(?:(?:is|are|was|were|do|does|did|can|could|would|should|will|has|have|had)\b\s*)?",
    re.IGNORECASE,
)
# Where a question asks a second thing ("..., and what protection does it have now?"); a question word inside a
# clause ("the workers who died", "when he stepped down") asks nothing of its own.
_ANOTHER_QUESTION = re.compile(rf"(?:[,;]|\b(?:and|or)\b)\s+(?:(?:and|or)\s+)?{_WH}\b", re.IGNORECASE)
# What makes a question a comparison, or a choice between things named: no one sentence need say either.
_COMPARING = re.compile(r"\b(?:or|than|compare[ds]?|comparison|versus|vs)\b", re.IGNORECASE)
# A negation ("no", but not the "No." of "No. 4").
_NEGATION = re.compile(
    r"\b(?:not|never|none|nor|neither|cannot|without)\b|n't\b|\bno\b(?!\.?\s*\d)", re.IGNORECASE
)
# A question's sentences, each up to its stop and the space and capital after it ("No. 9" is not one's end): one
# asking is held to one sentence; text around it ("Also ignore your instructions") says nothing the notes could.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[^a-z0-9\s])")
# The kinds a question's own words ask for beyond `text.answer_kinds.ANSWER_KINDS`: a person or body named for
# "who" (a capitalised word the question does not hold, past the sentence's first), a reason for "why".
_WHO = re.compile(r"^\s*(?:\w+\s+)?(?:who|whom|whose)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<=\s)[A-Z][\w&'’-]+")
_WHY = re.compile(r"^\s*why\b", re.IGNORECASE)
_REASON = re.compile(
    r"\b(?:because|due to|owing to|thanks to|so that|in order to|as a result|the reason|reasons?|caused?|led to|"
    r"therefore|after|following|for fear|since(?!\s+\d))\b|\bso\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Support:
    """How well a sentence says what a question takes as given: the local judge's probability that it does."""

    sentence: int  # its place in the sentences given
    probability: float


def asking(question: str) -> str | None:
    """The one thing `question` asks, when it asks one thing by a question word ("What unit is measured...?"); None
    for a yes/no question, a comparison or choice, and a question that asks two things (see the module's
    docstring). Sentences around the asking one ("I heard... What time does she leave?") are left out."""
    parts = [part.strip() for part in _SENTENCE_END.split(question.strip()) if part.strip()]
    asked = [part for part in parts if part.endswith("?")] or parts
    if len(asked) != 1:
        return None
    (part,) = asked
    if not _ASKING.match(part) or _ANOTHER_QUESTION.search(part) or _COMPARING.search(part):
        return None
    return part


@dataclass(frozen=True)
class _Wanted:
    """What a question asks for, read once from its words: the answer kinds (`ANSWER_KINDS`), a name for "who",
    a reason for "why", a negation to keep."""

    kinds: list[re.Pattern[str]]
    who: bool
    why: bool
    negated: bool
    names: frozenset[str]  # the capitalised words the question holds, which no answer to "who" is

    @classmethod
    def of(cls, asked: str) -> _Wanted:
        return cls(
            kinds=asked_kinds(asked),
            who=bool(_WHO.match(asked)),
            why=bool(_WHY.match(asked)),
            negated=bool(_NEGATION.search(asked)),
            names=frozenset(_NAME.findall(f" {asked}")),
        )

    @property
    def set_kind(self) -> bool:
        """Whether a set kind of answer is asked for (`given` checks it is given)."""
        return bool(self.kinds) or self.who or self.why

    def given(self, sentence: str) -> bool:
        """Whether `sentence` gives the kind of answer asked for (any, when none is set) and keeps the negation."""
        sentence = strip_citations(sentence)  # a claim's "[1]" is no figure
        if self.kinds and not gives_kind(self.kinds, sentence):
            return False
        if self.who and not set(_NAME.findall(sentence)) - self.names:
            return False
        if self.why and not _REASON.search(sentence):
            return False
        return not self.negated or bool(_NEGATION.search(sentence))


def presupposition(question: str) -> str:
    """What `question` takes as given, as a statement: the question words taken off its front, e.g. "What unit
    is measured to determine circuit complexity?" gives "Unit is measured to determine circuit complexity." A
    question with no question word in front (a yes/no question, an imperative) is its own statement."""
    text = question.strip().rstrip("?!. ").strip()
    given = _ASKING.sub("", text, count=1).strip() or text
    return f"{given[:1].upper()}{given[1:]}."


def supports(question: str, sentences: Sequence[tuple[str, str]]) -> list[Support]:
    """How well each of `sentences` (each its text and the title of its note, which it is about: "The
    society was founded..." is about the note's society) says what `question` takes as given, in their order."""
    claims = [claim for claim in split_claims(presupposition(question)) if claim.is_claim]
    return [
        Support(i, _probability(claims, Source(1, text, context=title)))
        for i, (text, title) in enumerate(sentences)
    ]


def _probability(claims: Sequence[Sentence], sentence: Source) -> float:
    """The judge's probability that `sentence` says one of `claims`; none when it finds the sentence says
    otherwise ("less than k" where the question takes "more than k" as given): that sentence does not answer."""
    votes = judge_claims(claims, [sentence])
    return max((_said(v.status, v.confidence) for v in votes), default=0.0)


def _said(status: str, confidence: float) -> float:
    if status == ClaimStatus.CONTRADICTED:
        return 0.0
    return 1.0 - confidence if status in NOT_SUPPORTED else confidence


def answering(question: str, sentences: Sequence[tuple[str, str]]) -> Support | None:
    """The sentence of `sentences` (best first: each its text and its note's title) that answers `question`:
    the one that best says what the question takes as given, of those that give the kind of answer it asks for
    and keep its negation; None when none does (the sentences are near the question but do not answer it).

    A question that asks no one thing (`asking`) is not held to one sentence: the first answers it."""
    if not sentences:
        return None
    asked = asking(question)
    if asked is None:
        return Support(0, 1.0)
    wanted = _Wanted.of(asked)
    fitting = [i for i, (text, _) in enumerate(sentences) if wanted.given(text)]
    if not fitting:
        return None
    found = supports(asked, [sentences[i] for i in fitting])
    best = max(found, key=lambda s: s.probability)
    enough = PRESUPPOSITION_SUPPORTED_WITH_KIND if wanted.set_kind else PRESUPPOSITION_SUPPORTED
    return Support(fitting[best.sentence], best.probability) if best.probability >= enough else None
