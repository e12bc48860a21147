"""Conversations: a question asked as the next turn of a thread, retrieved with what came before.

`conversation_retrieve` is what every way of asking calls (pages, the API, the `ask` command, the MCP tool): it
decides what to search for (`followups`), retrieves it and applies the refusal gate as for a first question,
plus the follow-up's own check (`followups.uncovered`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from garden.answering.condensing import condenser
from garden.answering.followups import NOT_COVERED, Condense, Search, Turn, followup_search, uncovered
from garden.answering.retrieval import RetrievalResult, retrieve
from garden.models import Conversation, Generator, Question, SearchRule
from garden.readers import ANONYMOUS, Reader


@dataclass
class Retrieved:
    """What retrieval found for a turn and what it searched for; `refusal_reason` set when the gate refuses
    though something was found (a follow-up whose own words the passages found do not hold)."""

    search: Search
    result: RetrievalResult
    refusal_reason: str = ""

    @property
    def refused(self) -> bool:
        return self.result.empty or bool(self.refusal_reason)


def conversation_turns(conversation: Conversation | None) -> list[Turn]:
    """The turns asked so far in `conversation`, oldest first, as `followups` reads them."""
    if conversation is None:
        return []
    rows = (
        Question.objects.filter(conversation=conversation)
        .order_by("turn")
        .values_list("text", "searched_for", "search_rule", "answer__generator")
    )
    return [
        Turn(text, searched or text, SearchRule(rule), generator == Generator.REFUSAL)
        for text, searched, rule, generator in rows
    ]


def conversation_retrieve(
    text: str,
    conversation: Conversation | None,
    reader: Reader = ANONYMOUS,
    *,
    anonymous: bool = False,
    claude_slot: AbstractContextManager[object] | None = None,
) -> Retrieved:
    """Retrieve for `text` asked as the next turn of `conversation` (None: a first question, on its own words)
    from what `reader` may read.
    Claude condenses a follow-up with no subject of its own when it is configured (and, for an `anonymous`
    visitor, when visitors have a Claude allowance), inside `claude_slot` as the answer's own call is made (what
    it raises, none free, comes out of here before Claude is called)."""
    turns = conversation_turns(conversation)
    condense: Condense | None = condenser(anonymous=anonymous)
    if condense is not None and claude_slot is not None:
        condense = _in_slot(condense, claude_slot)
    search = followup_search(text, turns, condense=condense, reader=reader) if turns else Search(text)
    result = retrieve(search.text, reader=reader)
    missing = uncovered(search, result)
    return Retrieved(search, result, NOT_COVERED.format(words=", ".join(missing)) if missing else "")


def _in_slot(condense: Condense, claude_slot: AbstractContextManager[object]) -> Condense:
    def condensed(earlier: Sequence[str], question: str) -> str | None:
        with claude_slot:
            return condense(earlier, question)

    return condensed
