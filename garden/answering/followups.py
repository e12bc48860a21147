"""Follow-up questions: what a question asked in a conversation is searched for, and how the gate judges it.

A follow-up whose words do not stand alone ("When was it built?", "And on Sundays?") is searched for with its
conversation's subject; one that names a subject of its own is searched for on its own words, so changing the
subject works. The rule reads the follow-up's content words (its words less stop words and the words that point
back, such as "other" or "one"):

- it names a topic or theme of the asker's garden (the notes they may read), or holds a term of the garden's own
  (a word of its passages that is not everyday English, such as "Ashcombe"): it stands alone;
- it holds a word that no passage of the asker's garden has ("France" after a tunnel question, or a word only
  notes for other audiences hold): it stands alone too, so the refusal gate judges it exactly as it would a
  first question;
- otherwise (no content word, or only everyday words the garden uses, such as "built" or "Sundays") it has no
  subject of its own and carries the conversation's: what is searched for is the subject's question, then the
  follow-up; with Claude, a standalone question Claude writes from the conversation (`condensing`).

History never lets an out-of-scope question through: a follow-up that carries the subject is refused when
fewer than COVERED of its own content words are in the passages found for it ("Who won the cup?" after a tunnel
question finds the tunnel, whose passages say nothing of winning or cups).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection

from garden.answering.phrases import everyday_words, words
from garden.answering.retrieval import (
    LANGUAGES_USED,
    RetrievalResult,
    audience_filter,
    matched_topics_and_themes,
    question_names,
)
from garden.answering.synthesis.extractive import STOP_WORDS
from garden.models import SearchRule
from garden.readers import ALL_AUDIENCES, ANONYMOUS, Reader
from text.words import word_set

# Words a follow-up points back with, which name no subject of their own ("What about the other one?").
POINTING_BACK = word_set(
    "about again also else instead more one ones other others same tell then there these this those too what"
)
# A carried follow-up is answered only when at least this share of its own content words is in the passages
# found for it: "When was it built?" (1 of 1 in the tunnel's passages) is; "Who won the cup?" (0 of 2) is not.
COVERED = 0.5
NOT_COVERED = (
    "The garden's passages on this conversation's subject do not mention what this follow-up asks about "
    "({words})."
)


@dataclass(frozen=True)
class Turn:
    """What a follow-up needs of an earlier turn of its conversation."""

    question: str
    searched_for: str
    rule: SearchRule
    refused: bool


@dataclass(frozen=True)
class Search:
    """What retrieval searches for a question, by which rule; `own_words` are the follow-up's content words the
    gate checks when it carried its conversation's subject (none when it stood alone)."""

    text: str
    rule: SearchRule = SearchRule.OWN_WORDS
    own_words: tuple[str, ...] = ()

    @property
    def carried(self) -> bool:
        return self.rule != SearchRule.OWN_WORDS


# Claude's standalone question for (the conversation's earlier questions, the follow-up), or None.
Condense = Callable[[Sequence[str], str], "str | None"]


def conversation_subject(turns: Sequence[Turn]) -> str | None:
    """What a follow-up carries: the latest question that was answered on its own words (or Claude's standalone
    question for a condensed one). A refused question changes no subject."""
    subject = None
    for turn in turns:
        if turn.refused:
            continue
        if turn.rule == SearchRule.OWN_WORDS:
            subject = turn.question
        elif turn.rule == SearchRule.CONDENSED:
            subject = turn.searched_for
    return subject


def own_words(question: str) -> list[str]:
    """The question's content words, in order, each once: its words less stop words and pointing-back words."""
    return list(dict.fromkeys(w for w in words(question) if w not in STOP_WORDS and w not in POINTING_BACK))


def garden_words(
    candidates: Sequence[str], article_ids: Sequence[int] | None = None, *, reader: Reader = ANONYMOUS
) -> dict[str, bool]:
    """For each of `candidates` (lower-case words) that full-text search keeps in a language of the garden's
    passages (stemmed: "built", "Sundays"; not a stop word), whether a current passage `reader` may read holds
    it, taken in that passage's language (of `article_ids` only, when given)."""
    if not candidates:
        return {}
    within = "" if article_ids is None else "AND c.article_id = ANY(%s) "
    theirs, audiences = audience_filter(reader, "c")
    with connection.cursor() as cursor:
        cursor.execute(
            f"{LANGUAGES_USED}SELECT w, bool_or(EXISTS (SELECT 1 FROM garden_passage c WHERE c.is_current "
            f"AND c.language = used.language {within}{theirs}"
            "AND c.search_vector @@ to_tsquery('simple', quote_literal(l)))) "
            "FROM used, unnest(%s::text[]) w, unnest(tsvector_to_array(to_tsvector(used.language, w))) l "
            "WHERE used.language IS NOT NULL GROUP BY w",
            [*([] if article_ids is None else [list(article_ids)]), *audiences, list(candidates)],
        )
        return {word: bool(found) for word, found in cursor.fetchall()}


def stands_alone(question: str, reader: Reader = ANONYMOUS) -> bool:
    """Whether the question names a subject of its own (see the module's rule) in the garden `reader` may
    read: a topic, theme or word only the notes of others hold is, for them, as a word no note holds."""
    if any(matched_topics_and_themes(question, question_names(question), reader=reader)):
        return True
    everyday = everyday_words()
    found = garden_words(own_words(question), reader=reader)
    return any(not present or word not in everyday for word, present in found.items())


def followup_search(
    question: str, turns: Sequence[Turn], *, condense: Condense | None = None, reader: Reader = ANONYMOUS
) -> Search:
    """What to search for `question`, asked by `reader` after `turns` (oldest first) of its conversation.
    `condense`, when given (Claude is configured), writes the standalone question of a follow-up that does not
    stand alone; when it gives none, the follow-up carries the subject's question offline."""
    subject = conversation_subject(turns)
    if subject is None or stands_alone(question, reader):
        return Search(question)
    carried = tuple(own_words(question))  # the gate checks them against what is found (`uncovered`)
    if condense is not None and (standalone := condense([t.question for t in turns], question)):
        return Search(standalone, SearchRule.CONDENSED, carried)
    return Search(f"{subject} {question}", SearchRule.CARRIED, carried)


def uncovered(search: Search, result: RetrievalResult) -> list[str]:
    """The follow-up's own words missing from the passages found for it, when too many are missing for the gate
    to let it through (fewer than COVERED present); empty when it may be answered."""
    if not search.carried or not search.own_words or result.empty:
        return []
    articles = sorted({hit.article_id for hit in result.sources} | {a.article_id for a in result.articles})
    found = garden_words(search.own_words, articles, reader=ALL_AUDIENCES)  # `result` holds only theirs
    if sum(found.values()) >= COVERED * len(found):
        return []
    return [word for word, present in found.items() if not present]
