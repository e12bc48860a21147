"""A derived topic's names follow its notes: its title and aliases are what its live notes give it now,
and each of those names is stored as the name its notes give (`garden.models.Name.article`), so that a reader
sees and asks by only the names of the notes they may read.

An import derives topics from the notes it writes (`garden.vocabulary.vocabulary_derived`); a note withheld,
retired, restored or changed since then would otherwise leave its names on a topic that other, live notes keep
live: a private note's alias on a shared topic is shown on the topic's page and lets questions naming it past
the refusal gate. The sync calls `topics_rederive` with the articles whose notes did any of that.

A topic is derived when some of its articles name it (by a tag, or their title); the topics of a garden with a
`_garden.yaml`, which its gardener names, and topics no article names (made in the admin) are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from garden.answering.phrases import phrase_keys
from garden.formats.registry import suffix_kept
from garden.models import Article, Name, Topic
from garden.models.vocabulary import names_keep
from garden.readers import ALL_AUDIENCES
from garden.vocabulary import NAME_TITLE_LIMIT, file_name, has_vocabulary_file, topics_named
from text.markup import slugify

BATCH = 1000  # topics re-derived at a time: what one batch reads is a few rows per topic and its articles


def topics_of(article_ids: Iterable[int]) -> set[int]:
    """The ids of the topics these articles are in."""
    through = Article.topics.through.objects.filter(article_id__in=list(article_ids))
    return set(through.values_list("topic_id", flat=True))


def topics_rederive(article_ids: Iterable[int], topic_ids: Iterable[int] = ()) -> int:
    """Re-derive the title and aliases of the topics these articles are in (and of `topic_ids`: those they were
    in before a change), from their live articles; returns how many topics changed."""
    topic_ids = sorted(topics_of(article_ids) | set(topic_ids))
    return sum(_batch_rederive(topic_ids[i : i + BATCH]) for i in range(0, len(topic_ids), BATCH))


def names_place(article_ids: Iterable[int]) -> None:
    """Store the names these articles' notes give the topics they are in, each as that note's (`Name.article`),
    as the import writes a group of notes: until `topics_rederive` at the end of the import, a topic a group
    derived is named for a reader only by the notes they may read (its own names were never stored,
    `vocabulary_apply(derived=True)`)."""
    articles = Article.objects.only("title", "aliases", "tags", "path").in_bulk(list(article_ids))
    through = Article.topics.through.objects.filter(article_id__in=articles)
    pairs = list(through.values_list("article_id", "topic_id"))
    topics = Topic.objects.in_bulk({topic_id for _, topic_id in pairs})
    Name.objects.filter(topic__in=topics, article__in=articles).delete()
    Name.objects.bulk_create(
        Name(phrase=phrase[:NAME_TITLE_LIMIT], topic=topics[topic_id], article_id=article_id)
        for article_id, topic_id in pairs
        for phrase in phrase_keys(
            [
                n
                for title, aliases in names_given(articles[article_id], topics[topic_id])
                for n in (title, *aliases)
            ]
        )
    )


def _batch_rederive(topic_ids: Sequence[int]) -> int:
    members: dict[int, list[int]] = {}
    for topic_id, article_id in (
        Article.topics.through.objects.filter(topic_id__in=topic_ids)
        .order_by("article_id")
        .values_list("topic_id", "article_id")
    ):
        members.setdefault(topic_id, []).append(article_id)
    articles = Article.objects.only("title", "aliases", "tags", "path", "garden").in_bulk(
        {a for ids in members.values() for a in ids}
    )
    live = set(Article.objects.live(ALL_AUDIENCES).filter(pk__in=articles).values_list("pk", flat=True))
    named_by_gardener = {
        g for g in {a.garden for a in articles.values()} if g and has_vocabulary_file(Path(g))
    }
    changed = []
    derived: list[Topic] = []
    names: dict[int, dict[int, list[str]]] = {}  # each derived topic's names, by the article giving them
    for topic in Topic.objects.filter(pk__in=topic_ids):
        mine = [articles[pk] for pk in members.get(topic.pk, [])]
        if any(article.garden in named_by_gardener for article in mine):
            continue
        given = {article.pk: names_given(article, topic) for article in mine}
        if not any(given.values()):
            continue  # no article names it: not derived
        title, aliases = _names_of(topic, [given[a.pk] for a in mine if a.pk in live])
        if (title, aliases) != (topic.title, topic.aliases):
            topic.title, topic.aliases = title, aliases
            changed.append(topic)
        derived.append(topic)
        # Every article's, live or not: the lookup keeps those of articles live for whoever asks.
        names[topic.pk] = {pk: [n for t, found in given[pk] for n in (t, *found)] for pk in given}
    Topic.objects.bulk_update(changed, ["title", "aliases"])
    names_keep(Topic, derived, names)
    return len(changed)


def names_given(article: Article, topic: Topic) -> list[tuple[str, list[str]]]:
    """The names `article` gives `topic`, as the import derived them. The article does not record its file's
    name as the import read it (a Logseq page is named by its title, not its file): the file name is kept
    when the topic has it, and is never added."""
    name = file_name(article.path or article.slug, keeps_suffix=suffix_kept(article.path))
    names = [name] if name in topic.aliases else []
    return [
        (title, aliases)
        for title, aliases in topics_named(article.title, article.aliases, article.tags, names)
        if slugify(title) == topic.slug
    ]


def _names_of(topic: Topic, given: Sequence[list[tuple[str, list[str]]]]) -> tuple[str, list[str]]:
    """The title and aliases the live articles give: the title kept while one of them gives it, else the first
    one's (by when it was made), else the slug's words, as a topic with no names of its own is titled."""
    titles = [title for names in given for title, _ in names]
    title = topic.title if topic.title in titles else (titles[0] if titles else _slug_title(topic.slug))
    aliases = [alias for names in given for _, found in names for alias in found]
    return title, list(dict.fromkeys(a for a in aliases if a.lower() != title.lower()))


def _slug_title(slug: str) -> str:
    return slug.replace("-", " ").title()
