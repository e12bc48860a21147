"""Garden content is editable here: articles with their revisions, topics and themes.

What the sync decides is shown, never edited: whether an article is withheld or retired, which garden it is of, its
path there, its aliases and tags, its audiences (the folder is the truth: operators change them in the files, and a git garden would keep
an edit here only until its next commit) and its slug (its address, which links and citations resolve to). A
withheld article, and a revision holding words of one, is listed only to those who may see it
(`ArticleQuerySet.shown_to`: operators), and an edit of one is not retrieved while it is withheld
(`garden.services.revisions_write`). A topic or theme is listed to those who may see one of its articles by the
same rule, or while it has none.
"""

from typing import Any

from django.contrib import admin
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest

from garden import services
from garden.models import Answer, Article, ArticleRevision, Audience, Question, Theme, Topic
from garden.models.content import VIEW_WITHHELD
from garden.readers import ALL_AUDIENCES, reader_of


@admin.register(Audience)
class AudienceAdmin(admin.ModelAdmin[Audience]):
    """Operators keep who is in which audience here (or with `manage.py audiences`)."""

    list_display = ["name", "created_at"]
    search_fields = ["name", "members__username"]
    filter_horizontal = ["members"]


def vocabulary_shown_to(queryset: QuerySet[Any], user: Any) -> QuerySet[Any]:
    """The topics or themes of `queryset` that `user` may see in the admin: those with an article shown to them
    (`ArticleQuerySet.shown_to`, the admin's articles: the one rule), and those with no article yet (one just
    written here). A topic drawn only from notes of audiences not theirs is not listed, nor opened."""
    field = queryset.model.articles.field.name  # "topics" or "themes"
    articles = Article.objects.filter(**{field: OuterRef("pk")})
    shown = Article.objects.shown_to(user).filter(**{field: OuterRef("pk")})
    return queryset.filter(Exists(shown) | ~Exists(articles))


def _sees_all(request: HttpRequest) -> bool:
    return request.user.has_perm(VIEW_WITHHELD)


def _named_whole(request: HttpRequest, topic: Topic | None) -> bool:
    """Whether the user may see every name of `topic` (none yet, when it is being written): then they edit them."""
    if topic is None or _sees_all(request):
        return True
    return topic.reader_title == topic.title and topic.reader_aliases == topic.aliases


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin[Topic]):
    """A topic shared by notes of several audiences is named to each editor only by the names the notes they may
    read give it (`Topic.reader_title`, `reader_aliases`), as the reader pages name it: a name they may not see
    is neither listed, searched for, shown nor edited (its names are read-only to them)."""

    list_display = ["shown_title", "slug"]

    @admin.display(description="title")
    def shown_title(self, topic: Topic) -> str:
        return topic.reader_title

    @admin.display(description="aliases")
    def shown_aliases(self, topic: Topic) -> str:
        return ", ".join(topic.reader_aliases)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Topic]:
        named = Topic.objects.with_names_read(
            ALL_AUDIENCES if _sees_all(request) else reader_of(request.user)
        )
        return vocabulary_shown_to(named, request.user)

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        return ["title", "slug", "aliases"] if _sees_all(request) else ["slug"]

    def get_fields(self, request: HttpRequest, obj: Topic | None = None) -> tuple[str, ...]:
        if _named_whole(request, obj):
            return ("title", "slug", "aliases")
        return ("shown_title", "slug", "shown_aliases")

    def get_readonly_fields(self, request: HttpRequest, obj: Topic | None = None) -> tuple[str, ...]:
        return () if _named_whole(request, obj) else ("shown_title", "slug", "shown_aliases")

    def get_prepopulated_fields(self, request: HttpRequest, obj: Topic | None = None) -> dict[str, Any]:
        return {"slug": ["title"]} if obj is None else {}


@admin.register(Theme)
class ThemeAdmin(admin.ModelAdmin[Theme]):
    list_display = ["title", "slug"]
    search_fields = ["title", "slug"]
    prepopulated_fields = {"slug": ["title"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Theme]:
        return vocabulary_shown_to(super().get_queryset(request), request.user)


class RevisionInline(admin.TabularInline[ArticleRevision, Article]):
    model = ArticleRevision
    fields = ["date", "title", "superseded", "created_at"]
    readonly_fields = ["date", "title", "superseded", "created_at"]
    extra = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[ArticleRevision]:
        return super().get_queryset(request).filter(pk__in=ArticleRevision.objects.shown_to(request.user))


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin[Article]):
    list_display = ["title", "slug", "updated_at"]
    search_fields = ["title", "slug"]
    filter_horizontal = ["topics", "themes"]
    inlines = [RevisionInline]
    # The folder is the truth: a note's garden, path, names and audiences come from its files, for everyone.
    readonly_fields = [
        "garden",
        "path",
        "audiences",
        "aliases",
        "tags",
        "retired_at",
        "withheld_at",
        "withheld_reason",
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Article | None = None) -> list[str]:
        """An article written here is given its slug (it has no file to take one from); after that it is its
        address and stays."""
        return [*self.readonly_fields, *(["slug"] if obj is not None else [])]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Article]:
        return super().get_queryset(request).filter(pk__in=Article.objects.shown_to(request.user))

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Only the topics and themes the user may see are offered (an article they may open is one of those
        that lets them see each of its own, so saving keeps them all)."""
        if db_field.name in ("topics", "themes"):
            kwargs["queryset"] = vocabulary_shown_to(db_field.related_model.objects.all(), request.user)
        return super().formfield_for_manytomany(db_field, request, **kwargs)


@admin.register(ArticleRevision)
class ArticleRevisionAdmin(admin.ModelAdmin[ArticleRevision]):
    """Saving an edited body creates a new current revision (the old one is kept, superseded)."""

    list_display = ["article", "date", "superseded", "created_at"]
    list_filter = ["superseded"]
    search_fields = ["article__slug", "title", "body"]
    readonly_fields = ["article", "content_hash", "superseded", "superseded_at", "source_path", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ArticleRevision, form: Any, change: bool) -> None:
        services.revision_create(
            article=obj.article, title=obj.title, body=obj.body, date=obj.date, source_path="admin"
        )

    def get_queryset(self, request: HttpRequest) -> QuerySet[ArticleRevision]:
        shown = ArticleRevision.objects.shown_to(request.user)
        return super().get_queryset(request).filter(pk__in=shown).select_related("article")


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin[Question]):
    list_display = ["text", "preflight_domain", "preflight_risk", "created_at"]
    list_filter = ["preflight_risk", "preflight_domain"]
    search_fields = ["text"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin[Answer]):
    list_display = ["question", "generator", "model", "cost_usd", "latency_ms", "created_at"]
    list_filter = ["generator"]
    readonly_fields = [
        "question",
        "generator",
        "model",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "latency_ms",
    ]
