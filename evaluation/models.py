"""The golden questions and the Verify-all runs over them.

These models were the verifier's until evaluation became an app of its own; their tables keep the names they had
then (`db_table`), so an existing database moved them without copying a row (migration `0001_initial`).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from claimcheck.terms import JudgeMode, choices
from evaluation.audiences import audience_named
from garden.models import Answer


class GoldenQuestion(models.Model):
    """A question of the golden set, loaded from its file; Verify-all runs every active one."""

    code = models.CharField(max_length=40, unique=True)
    category = models.CharField(max_length=30)
    kind = models.CharField(max_length=30, blank=True)
    question = models.TextField()
    expected_articles = ArrayField(models.SlugField(max_length=200), default=list, blank=True)
    reference_answer = models.TextField(blank=True)
    outdated_fact = models.TextField(
        blank=True,
        help_text="For an 'outdated' question, the superseded fact an answer must not give as current.",
    )
    audience = models.CharField(
        max_length=100,
        blank=True,
        help_text="The audience it is asked as in every run, whatever the run's; empty: the run's audience.",
    )
    active = models.BooleanField(default=True)

    class Meta:
        db_table = "verifier_goldenquestion"
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code}: {self.question[:60]}"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    ERROR = "error", "Failed"


class VerifyRun(models.Model):
    """One Verify-all run over the golden set; `report` holds its figures once done (`evaluation.report`)."""

    label = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    mode = models.CharField(
        max_length=10, choices=choices(JudgeMode), help_text="The judge mode configured when the run started."
    )
    audience = models.CharField(
        max_length=100,
        blank=True,
        help_text="The audience its questions were asked as (a question naming its own is asked as that one); "
        "empty: the default audience, as a visitor who is not signed in. `evaluation.audiences`.",
    )
    total = models.PositiveIntegerField(default=0)
    report = models.JSONField(default=dict, blank=True)
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "verifier_verifyrun"
        ordering = ["-started_at"]
        permissions = [("run_verify_all", "Can start Verify-all runs and read their reports")]

    def __str__(self) -> str:
        return f"{self.label} ({self.status})"

    @property
    def audience_named(self) -> str:
        """The audience the run was asked as, as pages say it ("everyone" for the default one)."""
        return audience_named(self.audience)


class RunItemStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    ERROR = "error", "Failed"


class VerifyRunItem(models.Model):
    """One golden question within a run, with the answer the whole flow gave it."""

    run = models.ForeignKey(VerifyRun, on_delete=models.CASCADE, related_name="items")
    golden = models.ForeignKey(GoldenQuestion, on_delete=models.PROTECT, related_name="+")
    answer = models.ForeignKey(Answer, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    status = models.CharField(max_length=10, choices=RunItemStatus.choices, default=RunItemStatus.PENDING)
    error = models.TextField(blank=True)
    seconds = models.FloatField(default=0)
    asked_as = models.CharField(
        max_length=100,
        blank=True,
        help_text="The audience the question was asked as; empty: the default one.",
    )
    beyond_audience = models.BooleanField(
        default=False,
        help_text="Whether every note expected to answer it is of an audience it was not asked as: another "
        "audience could answer it, so it is out of scope for this run (it must be refused). Decided when the "
        "item finished.",
    )
    answers_question = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether the answer states the question's expected fact (`claimcheck.answer_scoring`), decided when "
        "the item finished; empty when the question has no expected answer.",
    )

    class Meta:
        db_table = "verifier_verifyrunitem"
        ordering = ["run", "golden__code"]
        constraints = [models.UniqueConstraint(fields=["run", "golden"], name="unique_run_question")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.golden_id}: {self.status}"
