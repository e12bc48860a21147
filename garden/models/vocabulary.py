"""The garden's vocabulary: topics and themes, the names a question may use for them (`Name`), and which of
them a reader may see and a question names (`VocabularyQuerySet`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.urls import reverse

from garden.answering.phrases import phrase_key, phrase_keys, question_phrases
from garden.models.content import Article
from garden.name_limits import NAME_SLUG_LIMIT, NAME_TITLE_LIMIT
from garden.readers import ANONYMOUS, Reader


class VocabularyQuerySet(models.QuerySet[Any]):
    """Topics and themes a reader may see and a question may match: those with a live article the reader may
    read. A topic whose only notes were made private, or are for other audiences, names nothing this reader may
    read (and its title may be such a note's)."""

    def live(self, reader: Reader = ANONYMOUS) -> VocabularyQuerySet:
        return self.filter(
            Exists(Article.objects.live(reader).filter(**{self.model.articles.field.name: OuterRef("pk")}))
        )

    def read_by(self, reader: Reader = ANONYMOUS) -> VocabularyQuerySet:
        """The live ones, each with the names `reader` may see it by (`with_names_read`)."""
        return self.live(reader).with_names_read(reader)

    def with_names_read(self, reader: Reader = ANONYMOUS) -> VocabularyQuerySet:
        """Each with the names `reader` may see it by (`names_read`, as looked up): its own, and those the notes
        give it that `reader` may read. `Topic.reader_title` and `reader_aliases` read them."""
        column = name_column(self.model)
        names = Name.objects.filter(**{column: OuterRef("pk")}).filter(
            Q(article__isnull=True) | Exists(Article.objects.live(reader).filter(pk=OuterRef("article_id")))
        )
        return self.annotate(names_read=ArraySubquery(names.values("phrase")))

    def live_named_in(
        self, question: str, phrases: Sequence[str] | None = None, *, reader: Reader = ANONYMOUS
    ) -> VocabularyQuerySet:
        """The live ones one of whose names stands in `question` as whole words: the question's possible names
        (`phrases`, else every stretch a name could be) are looked up in `Name` (a B-tree probe each), then
        only the few found are checked for a live article, so the cost follows the question, not the number
        of topics. A name a note gives counts only while that note is live for `reader` (`Name.article`,
        probed by its key), so another audience's alias names nothing for them. One query: the names' lookup
        is its first step (`= ANY(ARRAY(...))`, run once), so the planner never reads the topics to look for
        their names."""
        column = f"{name_column(self.model)}_id"
        # One array parameter, not a placeholder per phrase: a 10,000-character text to check has tens of
        # thousands of stretches, which as an IN list took about twice as long to send and plan.
        asked = RawSQL(
            "phrase = ANY(%s)",
            [question_phrases(question) if phrases is None else list(phrases)],
            output_field=models.BooleanField(),
        )
        # A name a note gives is the reader's only when they may read that note (a probe by its key each).
        names = (
            Name.objects.filter(asked, **{f"{column}__isnull": False})
            .filter(
                Q(article__isnull=True)
                | Exists(Article.objects.live(reader).filter(pk=OuterRef("article_id")))
            )
            .values(column)
            .distinct()
        )
        sql, params = names.query.sql_with_params()
        named = RawSQL(
            f'"{self.model._meta.db_table}"."id" = ANY(ARRAY({sql}))',
            params,
            output_field=models.BooleanField(),
        )
        return self.live(reader).filter(named)


class VocabularyEntry(models.Model):
    """What a topic and a theme share: an address (slug), a title, the names a question may use for it (kept in
    `Name` on every save) and the names a reader may see it by."""

    slug = models.SlugField(max_length=NAME_SLUG_LIMIT, unique=True, allow_unicode=True)
    title = models.CharField(max_length=NAME_TITLE_LIMIT)

    objects = VocabularyQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        names_keep(type(self), [self])

    @property
    def names(self) -> list[str]:
        """The names a question may use for it, as written."""
        raise NotImplementedError

    def _names_read(self) -> set[str]:
        # Loaded by `read_by(reader)`; one loaded otherwise shows no name a note gives it (fails closed).
        return set(getattr(self, "names_read", None) or ())

    @property
    def reader_title(self) -> str:
        """Its title as its reader (`read_by`) sees it: the title, when a note they may read gives it, else the
        words of its slug (which its address shows anyway)."""
        if phrase_key(self.title) in self._names_read():
            return self.title
        return self.slug.replace("-", " ").title()


class Topic(VocabularyEntry):
    """A subject an article is about; its title and aliases are matched against questions."""

    aliases = ArrayField(models.CharField(max_length=None), default=list, blank=True)

    def get_absolute_url(self) -> str:
        return reverse("dashboard:topic", args=[self.slug])

    @property
    def names(self) -> list[str]:
        return [self.title, *self.aliases]

    @property
    def reader_aliases(self) -> list[str]:
        """Its aliases that a note its reader (`read_by`) may read gives it."""
        read = self._names_read()
        return [alias for alias in self.aliases if phrase_key(alias) in read]


class Theme(VocabularyEntry):
    """A broad theme across articles; its keywords are matched against questions."""

    keywords = ArrayField(models.CharField(max_length=None), default=list, blank=True)

    @property
    def names(self) -> list[str]:
        return list(self.keywords)


class Name(models.Model):
    """A name a question may use for a topic (its title or an alias) or a theme (a keyword), as looked up
    (`garden.answering.phrases.phrase_key`). Kept by `names_keep` whenever topics or themes are written.

    A name a note gives a topic it derives (`garden.sync.topic_names`) is stored once per note that gives it
    (`article`): it is the topic's name only for readers who may read one of those notes. A name with no
    article is the topic's own (its gardener's `_garden.yaml`, the admin), for everyone who sees the topic."""

    phrase = models.CharField(max_length=NAME_TITLE_LIMIT, db_index=True)
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    theme = models.ForeignKey(Theme, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    article = models.ForeignKey(Article, on_delete=models.CASCADE, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(topic__isnull=True) ^ models.Q(theme__isnull=True),
                name="name_of_one_thing",
            )
        ]

    def __str__(self) -> str:
        return self.phrase


def name_column(model: type[VocabularyEntry]) -> str:
    """The column of `Name` that holds a topic's (`topic`) or a theme's (`theme`): the model's own name."""
    return model.__name__.lower()


def names_keep(
    model: type[VocabularyEntry],
    rows: Sequence[VocabularyEntry],
    given: Mapping[int, Mapping[int, Sequence[str]]] | None = None,
) -> None:
    """Store the names of these topics (or themes) anew: bulk writes skip `save`, so the import calls this.
    A row in `given` (a derived topic's id -> each of its articles' id -> the names that article gives it) has
    its names stored per article, each a name only for the readers of that article (`Name`). Any other row's
    names are its own, but for those its notes already give: an edit in the admin, or a group of an import,
    never makes a name one audience's note gives everyone's."""
    field = name_column(model)
    given = given or {}
    derived = [row for row in rows if row.pk in given]
    own = [row for row in rows if row.pk not in given]
    # A derived topic's names as they should be, against those stored: an import has stored most of them with
    # its groups (`names_place`), so only what differs is written, not every name of the topic again.
    wanted = Counter(
        (row.pk, article_id, phrase[:NAME_TITLE_LIMIT])
        for row in derived
        for article_id, names in given[row.pk].items()
        for phrase in phrase_keys(names)
    )
    stale = []
    for pk, *key in Name.objects.filter(**{f"{field}__in": derived}).values_list(
        "pk", field, "article_id", "phrase"
    ):
        if wanted[tuple(key)] > 0:
            wanted[tuple(key)] -= 1
        else:
            stale.append(pk)
    Name.objects.filter(pk__in=stale).delete()
    Name.objects.filter(**{f"{field}__in": own, "article__isnull": True}).delete()
    from_notes: dict[int, set[str]] = {}
    for pk, phrase in Name.objects.filter(**{f"{field}__in": own, "article__isnull": False}).values_list(
        field, "phrase"
    ):
        from_notes.setdefault(pk, set()).add(phrase)
    Name.objects.bulk_create(
        [
            Name(phrase=phrase, article_id=article_id, **{f"{field}_id": pk})
            for (pk, article_id, phrase), missing in wanted.items()
            for _ in range(missing)
        ]
        + [
            Name(phrase=phrase[:NAME_TITLE_LIMIT], **{field: row})
            for row in own
            for phrase in phrase_keys(row.names)
            if phrase[:NAME_TITLE_LIMIT] not in from_notes.get(row.pk, ())
        ]
    )
