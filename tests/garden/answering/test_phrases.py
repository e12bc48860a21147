"""Topics, aliases and themes are found in a question by one indexed lookup: the same names the old
per-topic regular expression found, at a cost that does not grow with the garden's topics."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from garden.answering.phrases import MARKS_AT_EDGE, phrase_key, question_phrases
from garden.answering.retrieval import matched_themes, matched_topics, matched_topics_and_themes
from garden.models import Article, Theme, Topic

WORDS = ["swarm", "rules", "c++", ".net", "co-op", "bee", "bees", "queen", "Fellside", "état", "hive", "x"]
SEPARATORS = [" ", "  ", ", ", "-", "/", "'", "?", " (", ") ", "_", "."]


def found_by_regex(question: str, name: str) -> bool:
    """How the garden matched a name before: `(?<!\\w)name(?!\\w)`, in any case."""
    return re.search(rf"(?<!\w){re.escape(name.strip())}(?!\w)", question, re.IGNORECASE) is not None


def found_by_lookup(question: str, name: str) -> bool:
    return phrase_key(name) in set(question_phrases(question))


def _marks_at_edge(name: str) -> int:
    lead = len(name) - len(name.lstrip(".,-/'?()_+ ").lstrip())
    trail = len(name) - len(name.rstrip(".,-/'?()_+ ").rstrip())
    return max(lead, trail)


text = st.lists(st.sampled_from(WORDS + SEPARATORS), min_size=1, max_size=12).map("".join)


@settings(max_examples=400, deadline=None)
@given(question=text, name=text)
def test_a_name_is_found_exactly_where_the_regular_expression_found_it(question, name):
    if not name.strip() or _marks_at_edge(name.strip()) > MARKS_AT_EDGE:
        return  # a name starting or ending with a long run of marks is not looked for (MARKS_AT_EDGE)
    if not re.search(r"\w", name):
        return  # nor one of marks alone, which a run of marks could hold anywhere (`/` in `---/,`)
    assert found_by_lookup(question, name) == found_by_regex(question, name)


def test_names_made_of_several_words_and_punctuation():
    question = "What do the Swarm Rules say about C++ and .NET at the co-op?"
    for name in ["swarm rules", "c++", ".net", "co-op", "What", "the co-op"]:
        assert found_by_lookup(question, name), name
    for name in ["swarm rule", "op", "C", "net at the co"]:
        assert found_by_lookup(question, name) == found_by_regex(question, name), name


@pytest.mark.django_db
def test_matching_takes_one_query_however_many_topics(django_assert_num_queries, tmp_path):
    article = Article.objects.create(slug="hive-notes", title="Hive notes")
    names = [f"zorbex {n} {WORDS[n % len(WORDS)]}" for n in range(400)]
    topics = [Topic(slug=f"t-{n}", title=name, aliases=[f"alias {n}"]) for n, name in enumerate(names)]
    for topic in topics:
        topic.save()
    article.topics.add(*topics[:399])  # the last one has no live article: never matched
    theme = Theme(slug="orchard-zone", title="Orchard", keywords=["orchard", "apple trees"])
    theme.save()
    article.themes.add(theme)

    with django_assert_num_queries(1):
        found = matched_topics(f"Tell me of {names[7].upper()}, of alias 12 and of alias 399.")
    assert set(found) == {topics[7].pk, topics[12].pk}
    with django_assert_num_queries(1):
        assert matched_themes("Which APPLE TREES grow in the orchard?") == [theme.pk]
    assert matched_themes("Which apple tree grows there?") == []
    with django_assert_num_queries(1):  # both at once, as retrieval asks
        both = matched_topics_and_themes(f"Which apple trees does {names[7]} name?")
    assert both == ([topics[7].pk], [theme.pk])


@pytest.mark.django_db
def test_a_text_as_long_as_a_check_allows_is_looked_up_at_once(django_assert_max_num_queries, settings):
    """A fact-check's text is searched for topics too: its tens of thousands of stretches, in one lookup."""
    words = [f"a{n}" for n in range(settings.CHECK_MAX_CHARS // 4)]
    text = " ".join(words)[: settings.CHECK_MAX_CHARS]
    assert len(question_phrases(text)) > 65_535
    with django_assert_max_num_queries(2):
        assert matched_topics(text) == []
