"""`manage.py calibrate_judge`: retrain the local judge with the editors' reviews of this garden, now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.retraining import RetrainError, judge_retrain, judge_retrain_start


class Command(BaseCommand):
    help = (
        "Refit the local judge on the benchmarks plus half of the editors' decisions; keep the new version "
        "(and make it active) only if leave-one-domain-out holds and agreement on the other half rises."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--eval-dir", type=Path, default=Path(settings.JUDGE_EVAL_DIR))
        parser.add_argument("--cache-dir", type=Path, default=Path(settings.JUDGE_CALIBRATION_CACHE))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            version = judge_retrain_start(user_id=None, queue=False)
        except RetrainError as error:
            self.stdout.write(error.message)  # nothing to learn from yet: not a failure of `make calibrate`
            return
        result = judge_retrain(
            parameters_id=version.pk, eval_dir=options["eval_dir"], cache_dir=options["cache_dir"]
        )
        assert result is not None
        self.stdout.write(json.dumps({"version": result.version, "status": result.status, **result.report}))
        if result.status == "error":
            raise CommandError(result.report["reason"])
