"""The refusal gate's thresholds as fitted to this garden (`retrieval_report --calibrate`, self-calibration)."""

from __future__ import annotations

from typing import Any

from django.db import models


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
