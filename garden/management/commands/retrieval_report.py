"""`python manage.py retrieval_report [--golden FILE] [--calibrate]`: retrieval figures on the golden set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.test import override_settings

from garden.embeddings import EmbeddingBackend
from garden.golden import DEFAULT_FILE, golden_load
from garden.retrieval import Thresholds
from garden.retrieval_report import calibrate as calibrate_thresholds
from garden.retrieval_report import measure, observe
from garden.sync.reembedding import chunks_reembed


class Command(BaseCommand):
    help = "Print recall@5 and refusal-gate figures on the golden set as JSON; --calibrate sweeps the thresholds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", type=Path, default=DEFAULT_FILE)
        parser.add_argument("--calibrate", action="store_true", help="Also search for the best thresholds.")
        parser.add_argument(
            "--backend",
            choices=list(EmbeddingBackend),
            help="Measure as if the garden were embedded with this backend: its chunks are re-embedded and the "
            "questions embedded with it, in a transaction rolled back afterwards (nothing stored changes).",
        )

    def handle(self, *args: Any, golden: Path, calibrate: bool, backend: str | None, **options: Any) -> None:
        report: dict[str, Any] = {}
        with transaction.atomic():
            with override_settings(**({"EMBEDDING_BACKEND": backend} if backend else {})):
                if backend:
                    report["backend"] = backend
                    report["reembedded_chunks"], _ = chunks_reembed()
                observed = observe(golden_load(golden))
                report["configured"] = measure(observed, Thresholds.from_settings())
                if calibrate:
                    report["calibrated"] = measure(observed, calibrate_thresholds(observed))
            transaction.set_rollback(True)
        self.stdout.write(json.dumps(report, indent=2))
