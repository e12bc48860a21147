"""`python manage.py retrieval_report [--golden FILE] [--calibrate]`: retrieval figures on the golden set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from garden.golden import DEFAULT_FILE, golden_load
from garden.retrieval import Thresholds
from garden.retrieval_report import calibrate as calibrate_thresholds
from garden.retrieval_report import measure, observe


class Command(BaseCommand):
    help = "Print recall@5 and refusal-gate figures on the golden set as JSON; --calibrate sweeps the thresholds."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", type=Path, default=DEFAULT_FILE)
        parser.add_argument("--calibrate", action="store_true", help="Also search for the best thresholds.")

    def handle(self, *args: Any, golden: Path, calibrate: bool, **options: Any) -> None:
        observed = observe(golden_load(golden))
        report: dict[str, Any] = {"configured": measure(observed, Thresholds.from_settings())}
        if calibrate:
            report["calibrated"] = measure(observed, calibrate_thresholds(observed))
        self.stdout.write(json.dumps(report, indent=2))
