"""The garden's content: articles and their revisions, the passages cut from them, the images and links of
their notes, and the audiences they are for. What a reader may see of them is decided here, on their querysets
(`ArticleQuerySet.readable`, `passages_unreadable`), and every path that shows garden text goes through it."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.contrib.postgres.expressions import ArraySubquery
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import F, Q
from django.urls import reverse
from pgvector.django import HnswIndex, VectorField

from garden.readers import ANONYMOUS, Reader, reader_of
from providers.embeddings import DIMENSIONS


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
    topics = models.ManyToManyField("garden.Topic", related_name="articles", blank=True)
    themes = models.ManyToManyField("garden.Theme", related_name="articles", blank=True)
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


def passages_unreadable(reader: Reader, through: str = "") -> Q:
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
        return self.filter(passages_unreadable(reader))

    def readable(self, reader: Reader = ANONYMOUS) -> PassageQuerySet:
        return self.exclude(passages_unreadable(reader))


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
