"""The knowledge garden (articles, revisions, passages, topics, themes, links) and the questions asked of it."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.functions import RandomUUID
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, F, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.urls import reverse
from pgvector.django import HnswIndex, VectorField

from garden.answering.phrases import phrase_key, phrase_keys, question_phrases
from garden.name_limits import NAME_SLUG_LIMIT, NAME_TITLE_LIMIT
from garden.readers import ANONYMOUS, Reader, reader_of
from garden.skips import skipped_words
from providers.embeddings import DIMENSIONS


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
        column = "topic" if self.model is Topic else "theme"
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
        column = "topic_id" if self.model is Topic else "theme_id"
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


class Topic(models.Model):
    """A subject an article is about; its title and aliases are matched against questions."""

    slug = models.SlugField(max_length=NAME_SLUG_LIMIT, unique=True, allow_unicode=True)
    title = models.CharField(max_length=NAME_TITLE_LIMIT)
    aliases = ArrayField(models.CharField(max_length=None), default=list, blank=True)

    objects = VocabularyQuerySet.as_manager()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        names_keep(Topic, [self])

    def get_absolute_url(self) -> str:
        return reverse("dashboard:topic", args=[self.slug])

    @property
    def names(self) -> list[str]:
        return [self.title, *self.aliases]

    def _names_read(self) -> set[str]:
        # Loaded by `read_by(reader)`; a topic loaded otherwise shows no name a note gives it (fails closed).
        return set(getattr(self, "names_read", None) or ())

    @property
    def reader_title(self) -> str:
        """Its title as its reader (`read_by`) sees it: the title, when a note they may read gives it, else the
        words of its slug (which its address shows anyway)."""
        if phrase_key(self.title) in self._names_read():
            return self.title
        return self.slug.replace("-", " ").title()

    @property
    def reader_aliases(self) -> list[str]:
        """Its aliases that a note its reader (`read_by`) may read gives it."""
        read = self._names_read()
        return [alias for alias in self.aliases if phrase_key(alias) in read]


class Theme(models.Model):
    """A broad theme across articles; its keywords are matched against questions."""

    slug = models.SlugField(max_length=NAME_SLUG_LIMIT, unique=True, allow_unicode=True)
    title = models.CharField(max_length=NAME_TITLE_LIMIT)
    keywords = ArrayField(models.CharField(max_length=None), default=list, blank=True)

    objects = VocabularyQuerySet.as_manager()

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        super().save(*args, **kwargs)
        names_keep(Theme, [self])

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
    article = models.ForeignKey("Article", on_delete=models.CASCADE, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(topic__isnull=True) ^ models.Q(theme__isnull=True),
                name="name_of_one_thing",
            )
        ]

    def __str__(self) -> str:
        return self.phrase


def names_keep(
    model: type[Topic] | type[Theme],
    rows: Sequence[Topic | Theme],
    given: Mapping[int, Mapping[int, Sequence[str]]] | None = None,
) -> None:
    """Store the names of these topics (or themes) anew: bulk writes skip `save`, so the import calls this.
    A row in `given` (a derived topic's id -> each of its articles' id -> the names that article gives it) has
    its names stored per article, each a name only for the readers of that article (`Name`). Any other row's
    names are its own, but for those its notes already give: an edit in the admin, or a group of an import,
    never makes a name one audience's note gives everyone's."""
    field = "topic" if model is Topic else "theme"
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


class CalibrationSource(models.TextChoices):
    GOLDEN = "golden", "golden set"
    PROBES = "probes", "probes"


class RetrievalCalibration(models.Model):
    """The refusal gate's thresholds fitted to this garden on a golden set's in-scope and out-of-scope questions
    (`retrieval_report --calibrate`), or on probes of the garden when it has none (`--self-calibrate`, and after
    an import that changed much of it: `garden.answering.self_calibration`). The gate uses the latest one made for
    the embedder that runs now (thresholds fitted to one model's similarities mean nothing for another's), a
    golden set's before any probes', else the settings' defaults.
    Kept in the database, not in a file beside the code, because the garden is there: every web and worker
    process, on any machine, reads the same row, and a copy of the database keeps its calibration."""

    vector_threshold = models.FloatField()
    text_threshold = models.FloatField()
    embedded_by = models.CharField(
        max_length=40, help_text="The embedder it was fitted with (Passage.embedded_by)."
    )
    golden = models.CharField(max_length=500, blank=True, help_text="The golden set it was fitted on.")
    source = models.CharField(
        max_length=10,
        choices=CalibrationSource.choices,
        default=CalibrationSource.GOLDEN,
        help_text="What it was fitted on: a golden set, or probes the garden made of itself.",
    )
    passages = models.PositiveIntegerField(
        default=0, help_text="Current passages of the garden when it was fitted."
    )
    expected = models.JSONField(
        default=dict,
        blank=True,
        help_text="Its figures on the golden set or the probes (refusals, answers, recall@5), and held out.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"vector {self.vector_threshold}, text {self.text_threshold} ({self.embedded_by})"

    @property
    def fitted_figures(self) -> dict[str, Any]:
        """Its figures on the questions it was fitted on: the golden set's or the probes'."""
        return dict(self.expected.get("probes") or self.expected.get("golden_set") or {})

    @property
    def probes_asked(self) -> dict[str, Any]:
        """For a calibration on probes: how many of each were asked, and what the settings' thresholds gave."""
        return {
            "in_scope": None,
            "out_of_scope": None,
            "configured": None,
            **(self.expected.get("asked") or {}),
        }


class Audience(models.Model):
    """A group of accounts a part of the garden is for (`hr`, `board`, `clients-acme`): a note written for
    audiences is read only by their members (and operators). Members are kept by operators (the admin,
    `manage.py audiences`) and filled from the sign-in provider's groups claim."""

    name = models.SlugField(max_length=100, unique=True, allow_unicode=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="audiences", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


# Who may see a withheld article's text (in the admin): operators, who are told why it is withheld and fix it.
VIEW_WITHHELD = "garden.view_withheld_article"


class ArticleQuerySet(models.QuerySet["Article"]):
    """What a reader may see of the garden, decided here and nowhere else.

    - `readable(reader)`: articles none of whose text may be withheld, written for the default audience or for
      one of the reader's (`garden.readers.Reader`; operators read every audience's): every page, revision,
      embed, backlink, answer, quote and report showing garden text goes through it with the reader at hand. A
      note is withheld when it was made private (a flag, `.gardenignore`, a private folder) or can no longer be
      read or parsed (its audience written wrongly included): it fails closed until fixed. With no reader, the
      reader is a visitor who is not signed in (`ANONYMOUS`): a path not told who reads shows less, never more.
    - `live(reader)`: readable and in the garden now: listed, linked to, matched as a topic and retrieved. A note
      that left the garden (deleted) is retired: no longer live, while its history stays readable.
    - `shown_to(user)`: what `user` may see in the admin: the readable articles, and withheld ones too for those
      whose work is to know why (operators, `VIEW_WITHHELD`).
    """

    def readable(self, reader: Reader = ANONYMOUS) -> ArticleQuerySet:
        shown = self.filter(withheld_at__isnull=True)
        if reader.reads_all:
            return shown
        return shown.filter(Q(audiences=[]) | Q(audiences__overlap=sorted(reader.audiences)))

    def shown_to(self, user: AbstractUser | AnonymousUser) -> ArticleQuerySet:
        return self if user.has_perm(VIEW_WITHHELD) else self.readable(reader_of(user))

    def live(self, reader: Reader = ANONYMOUS) -> ArticleQuerySet:
        return self.readable(reader).filter(retired_at__isnull=True)


class Article(models.Model):
    """A page of the garden. Its text lives in revisions; exactly one revision is current."""

    # Names of any length a file system allows (and a Logseq namespace makes longer) are kept whole: no column
    # that holds a title, name or path has a limit. A slug is cut to its column and told apart by a hash
    # (`garden.formats.note.article_slug`).
    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    title = models.CharField(max_length=None)
    path = models.CharField(
        max_length=None,
        blank=True,
        help_text="Where the note lives in its garden, without .md: 'Sync/Security'.",
    )
    aliases = ArrayField(models.CharField(max_length=None), default=list, blank=True)
    tags = ArrayField(models.CharField(max_length=None), default=list, blank=True)
    topics = models.ManyToManyField(Topic, related_name="articles", blank=True)
    themes = models.ManyToManyField(Theme, related_name="articles", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    retired_at = models.DateTimeField(
        null=True, blank=True, help_text="When its note left the garden: no longer retrieved or listed."
    )
    withheld_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Since when readers may see none of its text (made private, or unreadable): see withheld_reason.",
    )
    withheld_reason = models.CharField(
        max_length=500, blank=True, help_text="Why it is withheld, for operators."
    )
    garden = models.CharField(
        max_length=None,
        blank=True,
        help_text="The folder of the garden its note belongs to; empty for an article written in the admin.",
    )
    audiences = ArrayField(
        models.CharField(max_length=100),
        default=list,
        blank=True,
        help_text="The audiences its note is for (front matter, Logseq property, .gardenaccess); none: "
        "everyone the site lets in.",
    )

    objects = ArticleQuerySet.as_manager()

    class Meta:
        ordering = ["title"]
        permissions = [
            ("view_withheld_article", "Can see the text of withheld articles"),
            ("read_every_audience", "Can read the notes of every audience"),
        ]
        indexes = [
            # The notes not for everyone: retrieval leaves out those not for its reader, a small set to look up.
            models.Index(fields=["id"], name="article_for_audiences", condition=~Q(audiences=[])),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("dashboard:article", args=[self.slug])

    @property
    def current_revision(self) -> ArticleRevision | None:
        return self.revisions.filter(superseded=False).first()

    @property
    def withheld(self) -> bool:
        return self.withheld_at is not None


def _withheld_places() -> ArraySubquery:
    """Where the notes of withheld articles live: a revision holding words of one (a Logseq block it
    references, made private since; see `ArticleRevision.shows`) is withheld with it."""
    return ArraySubquery(Article.objects.filter(withheld_at__isnull=False).values("path"))


def _unreadable_places(reader: Reader) -> ArraySubquery:
    """Where the notes live that `reader` may not read: withheld, or for audiences not theirs."""
    unreadable = Article.objects.exclude(pk__in=Article.objects.readable(reader).values("pk"))
    return ArraySubquery(unreadable.values("path"))


class RevisionQuerySet(models.QuerySet["ArticleRevision"]):
    def readable(self, reader: Reader = ANONYMOUS) -> RevisionQuerySet:
        """Revisions of an article `reader` may read none of whose words are a withheld note's (see `shows`).
        Words of a note of another audience leave the revision readable: its page shows the passages that
        hold them as not shared (`garden.selectors.revision_passages`, decision 0006)."""
        return self.filter(article__in=Article.objects.readable(reader)).exclude(
            shows__overlap=_withheld_places()
        )

    def shown_to(self, user: AbstractUser | AnonymousUser) -> RevisionQuerySet:
        """What `user` may see in the admin, which shows a revision's raw body: as `ArticleQuerySet.shown_to`,
        and not one holding words of a note they may not read (the admin cannot hide them as a page does)."""
        if user.has_perm(VIEW_WITHHELD):
            return self
        reader = reader_of(user)
        return self.readable(reader).exclude(shows__overlap=_unreadable_places(reader))


class ArticleRevision(models.Model):
    """One version of an article's Markdown body. Older versions are kept, marked superseded."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="revisions")
    title = models.CharField(max_length=None)
    body = models.TextField()
    content_hash = models.CharField(max_length=64)
    date = models.DateField(null=True, blank=True, help_text="The date the front matter gives this version.")
    source_path = models.CharField(max_length=None, blank=True)
    anchors = models.JSONField(
        default=dict, blank=True, help_text="Block ids (`^id`) of the note -> where they stand in its body."
    )
    images = models.JSONField(
        default=dict, blank=True, help_text="Images the note shows, as written (lower case) -> Image sha256."
    )
    shows = ArrayField(
        models.CharField(max_length=None),
        default=list,
        blank=True,
        help_text="Where the notes live whose words this version holds (the Logseq blocks it references): it is "
        "withheld, and so is every answer quoting it, while one of them is.",
    )
    superseded = models.BooleanField(default=False)
    superseded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The commit of a git garden (`garden.sync.git`) this version's text was imported from; blank for a folder's.
    commit = models.CharField(max_length=64, blank=True, help_text="The git commit this version came from.")
    commit_time = models.DateTimeField(null=True, blank=True)
    commit_author = models.CharField(max_length=None, blank=True)

    objects = RevisionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["article"],
                condition=models.Q(superseded=False),
                name="one_current_revision_per_article",
            ),
        ]

    def __str__(self) -> str:
        state = "superseded" if self.superseded else "current"
        return f"{self.article.slug} @ {self.date or self.created_at:%Y-%m-%d} ({state})"

    def get_absolute_url(self) -> str:
        """Its article's page, at this version when it is superseded. Needs `article` loaded."""
        return _revision_url(self.article, self.pk, current=not self.superseded)


def _revision_url(article: Article, revision_id: int, *, current: bool) -> str:
    """The page of one revision of an article: the current one is the article's own address."""
    url = article.get_absolute_url()
    return url if current else f"{url}?revision={revision_id}"


def _passages_unreadable(reader: Reader, through: str = "") -> Q:
    """The passages (reached `through` a relation, e.g. "passage__") whose words `reader` may not see: in an
    article withheld or of an audience not theirs, or holding words of one (`Passage.shows`)."""
    unreadable = Q(**{f"{through}article__withheld_at__isnull": False}) | Q(
        **{f"{through}shows__overlap": _withheld_places()}
    )
    if not reader.reads_all:
        unreadable |= ~Q(**{f"{through}article__audiences": []}) & ~Q(
            **{f"{through}article__audiences__overlap": sorted(reader.audiences)}
        )
        unreadable |= Q(**{f"{through}shows__overlap": _unreadable_places(reader)})
    return unreadable


class TextSearchConfigField(models.TextField[str, str]):
    """A PostgreSQL text-search configuration (`regconfig`), by name ("english", "german", "simple"): a column
    of this type lets a generated search vector be stemmed in each row's own language, which a name in a text
    column would not (its lookup is not immutable)."""

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        return "regconfig"


class PassageQuerySet(models.QuerySet["Passage"]):
    def unreadable(self, reader: Reader = ANONYMOUS) -> PassageQuerySet:
        """The passages whose words `reader` may not see: the rule `AnswerQuerySet.readable` holds an answer's
        sources to, for words not stored as an answer yet (a streamed answer's, as they are written)."""
        return self.filter(_passages_unreadable(reader))

    def readable(self, reader: Reader = ANONYMOUS) -> PassageQuerySet:
        return self.exclude(_passages_unreadable(reader))


class Passage(models.Model):
    """A passage of a revision: `revision.body[start:end] == text`, with its embedding and search vector."""

    revision = models.ForeignKey(ArticleRevision, on_delete=models.CASCADE, related_name="passages")
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="passages")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    page = models.PositiveIntegerField(
        null=True, blank=True, help_text="The page of a PDF the passage is on (from 1); none for a note."
    )
    shows = ArrayField(
        models.CharField(max_length=None),
        default=list,
        blank=True,
        help_text="Where the notes live whose words this passage holds (the Logseq blocks its note references): "
        "only their readers may read it (decision 0006).",
    )
    # Mirrors `not revision.superseded` of a live article (`ArticleQuerySet.live`), so retrieval searches only
    # the current text readers may see through a partial index.
    is_current = models.BooleanField(default=True)
    embedding = VectorField(dimensions=DIMENSIONS)
    # What made `embedding` (`providers.embeddings.embedder`, e.g. "onnx-int8/v2"). After EMBEDDING_BACKEND is
    # switched, the next import embeds again the current passages another embedder made.
    embedded_by = models.CharField(max_length=40)
    # The text-search configuration of its note's language (`garden.languages`): its search vector's stems and
    # stop words, and those the question is searched with for it.
    language = TextSearchConfigField(default="english")
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config=F("language")),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = PassageQuerySet.as_manager()

    class Meta:
        db_table = "garden_passage"
        ordering = ["revision", "ordinal"]
        indexes = [
            # m 12 and ef_construction 800 with RETRIEVAL_EF_SEARCH 200: at 100k real passages, the
            # most recall for a given ef_search of the pairs measured; cheaper builds (16/200, 12/400) needed a
            # wider search for the same recall (docs/performance.md). Changing them needs a migration.
            HnswIndex(
                name="passage_embedding_hnsw",
                fields=["embedding"],
                m=12,
                ef_construction=800,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(is_current=True),
            ),
            GinIndex(
                fields=["search_vector"], name="passage_search_gin", condition=models.Q(is_current=True)
            ),
            # The languages of the current passages, read by skipping from one to the next (`LANGUAGES_USED`).
            models.Index(fields=["language"], name="passage_language", condition=models.Q(is_current=True)),
        ]
        constraints = [
            models.UniqueConstraint(fields=["revision", "ordinal"], name="unique_passage_ordinal"),
        ]

    def __str__(self) -> str:
        return f"{self.article.slug} #{self.ordinal}"

    def get_absolute_url(self) -> str:
        """Where the passage is read: its revision's page, at the passage (a PDF's at its page). Needs
        `article` loaded; the revision is not (`is_current` mirrors it)."""
        return f"{_revision_url(self.article, self.revision_id, current=self.is_current)}#{self.anchor}"

    @property
    def anchor(self) -> str:
        """Where the passage stands on its article's page: a PDF's passage at its page, a note's at itself."""
        return f"page-{self.page}" if self.page is not None else f"passage-{self.pk}"

    @property
    def cited_as(self) -> str:
        """How the passage is named where it is cited: its article's title, with its page for a PDF's
        ("Hive care, p. 2"). Needs `article` loaded."""
        title = self.article.title
        return f"{title}, p. {self.page}" if self.page is not None else title


class Image(models.Model):
    """An image from a garden, shown where a note embeds it; stored once however many notes show it."""

    sha256 = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=None)
    content_type = models.CharField(max_length=50)
    data = models.BinaryField()

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("dashboard:image", args=[self.sha256, self.name])


class Link(models.Model):
    """A link from one article to another: one row per target, however many times and ways the note links to
    it. With no target it is a red link (the note it names is not in the garden, or not yet)."""

    source = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="links_out")
    target_slug = models.SlugField(max_length=200, allow_unicode=True)
    target = models.ForeignKey(
        Article, on_delete=models.SET_NULL, null=True, blank=True, related_name="links_in"
    )
    text = models.CharField(max_length=None, blank=True)
    written = ArrayField(
        models.CharField(max_length=None),
        default=list,
        blank=True,
        help_text="The targets as the note writes them (lower case, no .md): how its page finds the link.",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "target_slug"], name="unique_link")]

    def __str__(self) -> str:
        return f"{self.source.slug} -> {self.target_slug}"


class Sync(models.Model):
    """One sync of the garden (`import_garden`, `--watch`, the scheduled sync), as operators see it: what it
    did, what it refused to do and why, and every note it could not import with the reason."""

    started_at = models.DateTimeField(auto_now_add=True)
    folders = ArrayField(models.CharField(max_length=None), default=list)
    refused = models.TextField(
        blank=True, help_text="Why the sync changed nothing (an empty or missing folder)."
    )
    failures = models.JSONField(
        default=list, blank=True, help_text="[path, reason] of each note not imported."
    )
    counts = models.JSONField(default=dict, blank=True, help_text="created, revised, retired, withheld, ...")
    commit = models.CharField(
        max_length=64,
        blank=True,
        help_text="The git commit a git garden's sync imported (blank when refused).",
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        get_latest_by = ["started_at", "id"]

    def __str__(self) -> str:
        return f"sync of {', '.join(self.folders)} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def skipped(self) -> str:
        """What the sync left out on purpose, by kind ("6 in private places, 1 scanned PDF"), or ""."""
        return skipped_words(self.counts.get("skipped", {}).items())


class Risk(models.TextChoices):
    HIGH = "HIGH", "High"
    MEDIUM = "MEDIUM", "Medium"
    LOW = "LOW", "Low"


class Conversation(models.Model):
    """A thread of questions, each answered as one turn. A reader's question starts one or continues one they
    own (an anonymous visitor's: one of this session's).

    Its address uses `public_id`, a random UUID, as an answer's does: whoever has the link may read it, nobody
    can guess another reader's, and only its owner may ask in it.
    """

    public_id = models.UUIDField(default=uuid.uuid4, db_default=RandomUUID(), unique=True, editable=False)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    anonymous = models.BooleanField(
        default=False,
        help_text="Started by a visitor who was not signed in: only their session continues it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, help_text="When its latest turn was asked.")

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"conversation {self.public_id}"

    def get_absolute_url(self) -> str:
        return reverse("dashboard:conversation", args=[self.public_id])


class SearchRule(models.TextChoices):
    """How a question's search text was made (`garden.answering.followups`)."""

    OWN_WORDS = "own_words", "its own words"
    CARRIED = "carried", "its own words with the conversation's subject"
    CONDENSED = "condensed", "a standalone question Claude wrote from the conversation"


class Question(models.Model):
    """A question as asked, with the pre-flight classification shown beside its answer."""

    text = models.TextField()
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, null=True, blank=True, related_name="questions"
    )
    turn = models.PositiveIntegerField(
        default=1, db_default=1, help_text="Its place in its conversation, from 1."
    )
    searched_for = models.TextField(
        blank=True, default="", db_default="", help_text="What retrieval searched for (blank: its own text)."
    )
    search_rule = models.CharField(
        max_length=20,
        choices=SearchRule.choices,
        default=SearchRule.OWN_WORDS,
        db_default=SearchRule.OWN_WORDS,
    )
    asked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    anonymous = models.BooleanField(
        default=False,
        db_default=False,  # in the database too: rows that older migrations write without the field are not
        help_text="Asked by a visitor who was not signed in: answered and judged on their own Claude allowance.",
    )
    preflight_domain = models.CharField(max_length=30)
    preflight_risk = models.CharField(max_length=10, choices=Risk.choices)
    preflight_suggestion = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("ask_question", "Can ask the garden questions")]

    def __str__(self) -> str:
        return self.text[:80]


class Retrieval(models.Model):
    """What retrieval found for a question, and whether the refusal gate refused it."""

    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="retrieval")
    topics = models.ManyToManyField(Topic, blank=True)
    themes = models.ManyToManyField(Theme, blank=True)
    refused = models.BooleanField(default=False)
    refusal_reason = models.CharField(max_length=300, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"retrieval for question {self.question_id}"


class RetrievedArticle(models.Model):
    """An article retrieval counted for a question, with its scores."""

    retrieval = models.ForeignKey(Retrieval, on_delete=models.CASCADE, related_name="articles")
    article = models.ForeignKey(Article, on_delete=models.CASCADE)
    rank = models.PositiveIntegerField()
    score = models.FloatField()
    vector_score = models.FloatField()
    text_score = models.FloatField()

    class Meta:
        ordering = ["rank"]

    def __str__(self) -> str:
        return f"#{self.rank} {self.article_id} ({self.score:.3f})"


class Generator(models.TextChoices):
    CLAUDE = "claude", "Claude"
    SERVED = "openai", "Served model"  # the team's own, over the OpenAI API (`ANSWER_PROVIDER=openai`)
    EXTRACTIVE = "extractive", "Local extractive synthesiser"
    REFUSAL = "refusal", "Retrieval refused"


class AnswerQuerySet(models.QuerySet["Answer"]):
    def readable(self, reader: Reader = ANONYMOUS) -> AnswerQuerySet:
        """Answers `reader` may see: each of their sources is in an article the reader may read and holds no
        words of one they may not (an answer quotes and paraphrases its sources, so it is withheld with them,
        and is back when they are; an answer from another audience's notes is not this reader's)."""
        unreadable = _passages_unreadable(reader, through="passage__")
        return self.exclude(Exists(AnswerSource.objects.filter(answer=OuterRef("pk")).filter(unreadable)))


class Answer(models.Model):
    """The answer given to a question, with what it cost. `error` is set when synthesis failed.

    Its address uses `public_id`, a random UUID, never the sequential primary key: whoever has the link may read
    the answer, and nobody can guess another reader's.
    """

    question = models.OneToOneField(Question, on_delete=models.CASCADE, related_name="answer")
    # The database's default gives each answer stored before this field (and any row written without it) its own.
    public_id = models.UUIDField(default=uuid.uuid4, db_default=RandomUUID(), unique=True, editable=False)
    text = models.TextField(blank=True)
    generator = models.CharField(max_length=20, choices=Generator.choices)
    model = models.CharField(max_length=100, blank=True)
    error = models.TextField(blank=True)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    budget_held = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Today's Claude budget could not cover this answer: the local synthesiser wrote it.",
    )
    model_failed = models.TextField(
        blank=True,
        db_default="",
        help_text="Why the served model could not write this answer: the local synthesiser wrote it instead.",
    )
    abstained = models.BooleanField(
        default=False,
        db_default=False,
        help_text="The notes were near the question but did not answer it: the answer says so (an abstention).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AnswerQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"answer {self.pk} to {self.question}"

    def get_absolute_url(self) -> str:
        return reverse("dashboard:answer", args=[self.public_id])

    @property
    def withheld(self) -> bool:
        """Whether a source of this answer is in a withheld article, or holds words of one (reads the
        prefetched sources; a query more only when a source holds words of other notes)."""
        sources = self.sources.all()
        if any(source.passage.article.withheld for source in sources):
            return True
        places = {place for source in sources for place in source.passage.shows}
        return bool(places) and Article.objects.filter(withheld_at__isnull=False, path__in=places).exists()

    def withheld_from(self, reader: Reader) -> bool:
        """Whether `reader` may not see this answer: withheld from everyone, or a source of it is in a note for
        audiences not theirs, or holds words of one (reads the prefetched sources, as `withheld`)."""
        if self.withheld:
            return True
        sources = self.sources.all()
        if not all(reader.may_read(source.passage.article.audiences) for source in sources):
            return True
        places = {place for source in sources for place in source.passage.shows}
        if not places or reader.reads_all:
            return False
        readable = Article.objects.readable(reader).values("pk")
        return Article.objects.filter(path__in=places).exclude(pk__in=readable).exists()

    @property
    def refused(self) -> bool:
        return self.generator == Generator.REFUSAL

    @property
    def answers_question(self) -> bool:
        """Whether the answer answers its question: neither refused nor an abstention, and not failed."""
        return not (self.refused or self.abstained or self.failed)

    @property
    def failed(self) -> bool:
        return bool(self.error)


class AnswerSource(models.Model):
    """Source `[number]` as given to synthesis: a passage of a specific revision."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sources")
    number = models.PositiveIntegerField()
    passage = models.ForeignKey(Passage, on_delete=models.PROTECT, related_name="+")
    score = models.FloatField()

    class Meta:
        ordering = ["number"]
        constraints = [models.UniqueConstraint(fields=["answer", "number"], name="unique_source_number")]

    def __str__(self) -> str:
        return f"[{self.number}] {self.passage}"
