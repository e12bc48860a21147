"""Measuring follow-ups against first questions: retrieval and the refusal gate over golden conversations.

Each conversation is asked turn by turn as a reader would, offline (the rule of `followups`, no Claude): a turn
is searched for by `followup_search` given the turns before it, and refused as the gate would refuse it. For the
in-scope turns the figure is right-source-in-top-5 (the share with an expected article among the first five
counted articles); for the out-of-scope ones, the share refused. The same two figures for first questions come
from the golden question set, each question asked on its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from garden.answering.followups import Search, Turn, followup_search, uncovered
from garden.answering.retrieval import RetrievalResult, Thresholds, gather, select
from garden.golden import GoldenConversation, GoldenEntry
from garden.models import Article
from garden.readers import ANONYMOUS, Reader

TOP = 5


def _asked(search: Search, thresholds: Thresholds, reader: Reader) -> tuple[RetrievalResult, bool]:
    result = select(gather(search.text, reader=reader), thresholds, max_articles=TOP, max_sources=8)
    return result, result.empty or bool(uncovered(search, result))


def _share(hits: Sequence[bool]) -> float | None:
    return round(sum(hits) / len(hits), 3) if hits else None


class _Tally:
    """Right source in the top five for in-scope turns, refusals for out-of-scope ones."""

    def __init__(self) -> None:
        self.found: list[bool] = []
        self.refused_in: list[bool] = []
        self.refused_out: list[bool] = []

    def add(self, entry: GoldenEntry, result: RetrievalResult, refused: bool, slugs: dict[int, str]) -> bool:
        if not entry.in_scope:
            self.refused_out.append(refused)
            return refused
        top = set() if refused else {slugs.get(a.article_id) for a in result.articles[:TOP]}
        found = bool(top & set(entry.expected_articles))
        self.found.append(found)
        self.refused_in.append(refused)
        return found

    def figures(self) -> dict[str, Any]:
        return {
            "in_scope": len(self.found),
            "right_source_in_top_5": _share(self.found),
            "in_scope_refused": _share(self.refused_in),
            "out_of_scope": len(self.refused_out),
            "out_of_scope_refused": _share(self.refused_out),
        }


def conversations_measure(
    conversations: Sequence[GoldenConversation],
    first_questions: Sequence[GoldenEntry],
    thresholds: Thresholds,
    reader: Reader = ANONYMOUS,
) -> dict[str, Any]:
    """The figures for follow-ups (every turn after the first), by kind, beside those for first questions
    (`first_questions`, each asked alone) and the conversations' opening turns; with each follow-up that missed
    (in scope: no right source in the top five; out of scope: answered) and what was searched for it. The
    follow-ups searched on their own words alone, as if no conversation came before, show what carrying adds.
    Every question is asked as `reader` (by default the anonymous reader: the default audience's notes)."""
    slugs = dict(Article.objects.values_list("id", "slug"))
    first, opening, followups, alone = _Tally(), _Tally(), _Tally(), _Tally()
    by_kind: dict[str, _Tally] = defaultdict(_Tally)
    missed: list[dict[str, str]] = []
    for entry in first_questions:
        first.add(entry, *_asked(Search(entry.question), thresholds, reader), slugs)
    for conversation in conversations:
        turns: list[Turn] = []
        for place, entry in enumerate(conversation.turns):
            search = followup_search(entry.question, turns)
            result, refused = _asked(search, thresholds, reader)
            turns.append(Turn(entry.question, search.text, search.rule, refused))
            if place == 0:
                opening.add(entry, result, refused, slugs)
                continue
            ok = followups.add(entry, result, refused, slugs)
            alone.add(entry, *_asked(Search(entry.question), thresholds, reader), slugs)
            by_kind[entry.kind or "follow-up"].add(entry, result, refused, slugs)
            if not ok:
                missed.append({"id": entry.id, "question": entry.question, "searched_for": search.text})
    return {
        "thresholds": {"vector": round(thresholds.vector, 3), "text": round(thresholds.text, 3)},
        "first_questions": first.figures(),
        "opening_turns": opening.figures(),
        "follow_ups": followups.figures(),
        "follow_ups_searched_alone": alone.figures(),
        "follow_ups_by_kind": {kind: tally.figures() for kind, tally in sorted(by_kind.items())},
        "missed": missed,
    }
