"""What asking writes: conversations, questions, what retrieval found for them, the answers and the sources they
were written from. An answer is readable only while every one of its sources is (`AnswerQuerySet.readable`)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.functions import RandomUUID
from django.db import models
from django.db.models import Exists, OuterRef
from django.urls import reverse

from garden.models.content import Article, Passage, passages_unreadable
from garden.models.vocabulary import Theme, Topic
from garden.readers import ANONYMOUS, Reader


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
        unreadable = passages_unreadable(reader, through="passage__")
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
