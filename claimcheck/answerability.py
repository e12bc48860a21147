"""Whether a sentence answers a question: it must say what the question takes as given.

A question presupposes a statement: "What unit is measured to determine circuit complexity?" takes as given that
"unit is measured to determine circuit complexity". A sentence that answers it says that statement (and more: the
answer); a sentence near the question that does not say it (another measure, "circuit simplicity", a negation the
question adds) does not answer it, however close its words. The statement is checked by the local judge, the
same one that checks answers' claims, so a question is held to what a claim is held to. The answer's kind
(a year for "when", a figure for "how many") is the synthesiser's concern: it ranks the sentences first.

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
from claimcheck.terms import NOT_SUPPORTED

# Below this probability the local judge does not hold the question's presupposition said by the sentence: the
# sentence is near the question without answering it. Tuned on SQuAD 2.0's "Computational complexity theory"
# (`python -m bench --only answerability`): 0.3 abstains on too few questions written to look answerable, 0.5
# on too many that the notes do answer.
PRESUPPOSITION_SUPPORTED: Final = 0.4

# A question's first words that ask for the answer rather than state what is given: a preposition before the
# question word ("In what year"), the question word with its measure ("how many"), and an auxiliary after it.
_ASKING = re.compile(
    r"^\s*(?:(?:in|on|at|by|for|from|to|of|with|during|under|after|before|according to)\s+)?"
    r"(?:what|which|who|whom|whose|when|where|why|how(?:\s+(?:many|much|long|often|far|old|big|large))?)\b\s*"
    r"(?:(?:is|are|was|were|do|does|did|can|could|would|should|will|has|have|had)\b\s*)?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Support:
    """How well a sentence says what a question takes as given: the local judge's probability that it does."""

    sentence: int  # its place in the sentences given
    probability: float

    @property
    def answers(self) -> bool:
        return self.probability >= PRESUPPOSITION_SUPPORTED


def presupposition(question: str) -> str:
    """What `question` takes as given, as a statement: the question words taken off its front, e.g. "What unit
    is measured to determine circuit complexity?" gives "Unit is measured to determine circuit complexity." A
    question with no question word in front (a yes/no question, an imperative) is its own statement."""
    text = question.strip().rstrip("?!. ").strip()
    given = _ASKING.sub("", text, count=1).strip() or text
    return f"{given[:1].upper()}{given[1:]}."


# Where a question asks two things ("How long is it and how many arches does it have?"): each is its own.
_ANOTHER_QUESTION = re.compile(
    r"\s*,?\s+(?:and|or)\s+(?=(?:what|which|who|whom|whose|when|where|why|how)\b)", re.IGNORECASE
)


def supports(question: str, sentences: Sequence[tuple[str, str]]) -> list[Support]:
    """How well each of `sentences` (each its text and the title of its note, which it is about: "The
    society was founded..." is about the note's society) says what `question` takes as given, in their order;
    for a question that asks two things, what either takes as given."""
    given = [presupposition(part) for part in _ANOTHER_QUESTION.split(question) if part.strip()]
    claims = [claim for statement in given for claim in split_claims(statement) if claim.is_claim]
    return [
        Support(i, _probability(claims, Source(1, text, context=title)))
        for i, (text, title) in enumerate(sentences)
    ]


def _probability(claims: Sequence[Sentence], sentence: Source) -> float:
    """The judge's probability that `sentence` says one of `claims`."""
    votes = judge_claims(claims, [sentence])
    return max(
        (v.confidence if v.status not in NOT_SUPPORTED else 1.0 - v.confidence for v in votes), default=0.0
    )


def answering(question: str, sentences: Sequence[tuple[str, str]]) -> Support | None:
    """The sentence that best says what `question` takes as given, when one says it well enough; None when none
    does (the sentences are near the question but do not answer it)."""
    best = max(supports(question, sentences), key=lambda s: s.probability, default=None)
    return best if best is not None and best.answers else None
