"""The golden question set: questions with categories and the articles that answer them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

OUT_OF_SCOPE = "out_of_scope"
# Questions about what the notes cover that none of them answers ("What colour is River Kest painted?"): the
# answer must say the notes do not say (an abstention), not answer with the nearest sentences.
UNANSWERABLE = "unanswerable"
CATEGORIES = (
    "single_fact",
    "synthesis",
    "numbers_dates",
    "comparison",
    "outdated",
    OUT_OF_SCOPE,
    UNANSWERABLE,
    "adversarial",
)
DEFAULT_FILE = Path(__file__).resolve().parent / "sample" / "golden.yaml"


@dataclass(frozen=True)
class GoldenEntry:
    """One entry of a golden set file; Verify-all stores it as `evaluation.models.GoldenQuestion`."""

    id: str
    category: str
    question: str
    expected_articles: tuple[str, ...]
    answer: str | None = None
    kind: str | None = None
    outdated_fact: str | None = (
        None  # for an "outdated" question: the superseded fact, `answer` the current one
    )
    audience: str = ""  # the audience whose notes answer it, which it is asked as (empty: the default one)

    @property
    def in_scope(self) -> bool:
        return self.category != OUT_OF_SCOPE


def golden_load(path: Path = DEFAULT_FILE) -> list[GoldenEntry]:
    """Read a golden set file; raises ValueError naming the entry that is malformed."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    questions = []
    for number, entry in enumerate(entries, start=1):
        if (
            not isinstance(entry, dict)
            or not entry.get("question")
            or entry.get("category") not in CATEGORIES
        ):
            raise ValueError(f"{path}: entry {number} needs a 'question' and a 'category' in {CATEGORIES}")
        if not isinstance(entry.get("audience") or "", str):
            raise ValueError(f"{path}: entry {number}'s 'audience' is the name of one audience")
        questions.append(
            GoldenEntry(
                id=str(entry.get("id") or number),
                category=entry["category"],
                question=str(entry["question"]),
                expected_articles=tuple(entry.get("expected_articles") or ()),
                answer=None if entry.get("answer") is None else str(entry["answer"]),
                kind=entry.get("kind"),
                outdated_fact=None if entry.get("outdated_fact") is None else str(entry["outdated_fact"]),
                audience=entry.get("audience") or "",
            )
        )
    return questions


CONVERSATIONS_FILE = Path(__file__).resolve().parent / "sample" / "conversations.yaml"


@dataclass(frozen=True)
class GoldenConversation:
    """One conversation of a golden conversations file: its turns, oldest first, each a `GoldenEntry` whose
    `kind` says what the follow-up does ("pronoun", "ellipsis", "other_one", "change_of_subject", ...)."""

    id: str
    turns: tuple[GoldenEntry, ...]


def conversations_load(path: Path = CONVERSATIONS_FILE) -> list[GoldenConversation]:
    """Read a golden conversations file; raises ValueError naming the conversation or turn that is malformed.
    A turn is in scope (category "single_fact") unless its category says otherwise."""
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    conversations = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("turns"), list) or not entry["turns"]:
            raise ValueError(f"{path}: conversation {number} needs a list of 'turns'")
        name = str(entry.get("id") or number)
        turns = []
        for place, turn in enumerate(entry["turns"], start=1):
            category = turn.get("category", "single_fact") if isinstance(turn, dict) else None
            if not isinstance(turn, dict) or not turn.get("question") or category not in CATEGORIES:
                raise ValueError(f"{path}: conversation {name}, turn {place} needs a 'question'")
            turns.append(
                GoldenEntry(
                    id=f"{name}.{place}",
                    category=category,
                    question=str(turn["question"]),
                    expected_articles=tuple(turn.get("expected_articles") or ()),
                    kind=turn.get("kind"),
                )
            )
        conversations.append(GoldenConversation(id=name, turns=tuple(turns)))
    return conversations
