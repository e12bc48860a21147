"""The golden set in the database: its file (`garden.golden`, which the garden's own refusal-gate calibration
reads too) loaded as `GoldenQuestion` rows, which Verify-all runs."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from evaluation.models import GoldenQuestion
from garden.golden import DEFAULT_FILE, golden_load


def golden_sync(path: Path = DEFAULT_FILE) -> int:
    """Load the golden set file into the database (upsert by id; questions no longer in the file go inactive)."""
    questions = golden_load(path)
    with transaction.atomic():
        for q in questions:
            GoldenQuestion.objects.update_or_create(
                code=q.id,
                defaults={
                    "category": q.category,
                    "kind": q.kind or "",
                    "question": q.question,
                    "expected_articles": list(q.expected_articles),
                    "reference_answer": q.answer or "",
                    "outdated_fact": q.outdated_fact or "",
                    "audience": q.audience,
                    "active": True,
                },
            )
        GoldenQuestion.objects.exclude(code__in=[q.id for q in questions]).update(active=False)
    return len(questions)
