"""Conversations: a question asked as the next turn of a thread, retrieved with what came before.

`conversation_retrieve` is what every way of asking calls (pages, the API, the `ask` command, the MCP tool): it
decides what to search for (`followups`), retrieves it and applies the refusal gate as for a first question,
plus the follow-up's own check (`followups.uncovered`).
"""

from __future__ import annotations

from dataclasses import dataclass

from garden.answering.condensing import condenser
from garden.answering.followups import NOT_COVERED, Search, Turn, followup_search, uncovered
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
    text: str, conversation: Conversation | None, reader: Reader = ANONYMOUS, *, anonymous: bool = False
) -> Retrieved:
    """Retrieve for `text` asked as the next turn of `conversation` (None: a first question, on its own words)
    from what `reader` may read.
    Claude condenses a follow-up with no subject of its own when it is configured (and, for an `anonymous`
    visitor, when visitors have a Claude allowance)."""
    turns = conversation_turns(conversation)
    search = (
        followup_search(text, turns, condense=condenser(anonymous=anonymous), reader=reader)
        if turns
        else Search(text)
    )
    result = retrieve(search.text, reader=reader)
    missing = uncovered(search, result)
    return Retrieved(search, result, NOT_COVERED.format(words=", ".join(missing)) if missing else "")
