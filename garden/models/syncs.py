"""The syncs of the garden, as operators see them on the logs page."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from garden.skips import skipped_words


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
