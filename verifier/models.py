"""Verifications of answers: the claim-level judge's work on one answer."""

from __future__ import annotations

from django.db import models

from garden.models import Answer


class VerificationStatus(models.TextChoices):
    PENDING = "pending", "Waiting for the judge"
    RUNNING = "running", "Being checked"
    DONE = "done", "Checked"
    ERROR = "error", "Check failed"


class Verification(models.Model):
    """The post-flight check of one answer; its status moves pending -> running -> done | error."""

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="verification")
    status = models.CharField(
        max_length=10, choices=VerificationStatus.choices, default=VerificationStatus.PENDING
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"verification of answer {self.answer_id}: {self.status}"

    @property
    def finished(self) -> bool:
        return self.status in {VerificationStatus.DONE, VerificationStatus.ERROR}
