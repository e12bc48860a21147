"""`python manage.py verify_all [--label NAME] [--audience NAME]`: a Verify-all run of the golden set, asked as
an audience (the default one unless named); prints its report."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from evaluation.audiences import UnknownAudience
from evaluation.models import RunStatus, VerifyRun
from evaluation.report import FIGURES, report_shown
from evaluation.running import RUN_FAILED, run_progress, verify_run_item
from evaluation.starting import verify_run_start
from garden.golden import DEFAULT_FILE


class Command(BaseCommand):
    help = "Run every golden question through the whole flow (on the Celery workers) and print the report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--label", default="", help="Name of the run (default: the date and time).")
        parser.add_argument(
            "--inline", action="store_true", help="Run here, one by one, without Celery workers."
        )
        parser.add_argument("--timeout", type=float, default=1800, help="Seconds to wait for the workers.")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the report as JSON.")
        parser.add_argument("--golden", type=Path, default=DEFAULT_FILE, help="The golden set file to load.")
        parser.add_argument(
            "--audience",
            default="",
            help="The audience to ask the questions as (default: the default audience, as a visitor who is not "
            "signed in); a question naming its own audience is asked as that one.",
        )

    def handle(
        self,
        *args: Any,
        label: str,
        inline: bool,
        timeout: float,
        as_json: bool,
        golden: Path,
        audience: str,
        **options: Any,
    ) -> None:
        try:
            run = verify_run_start(
                label=label or time.strftime("run %Y-%m-%d %H:%M"),
                queue=not inline,
                golden_file=golden,
                audience=audience,
            )
        except UnknownAudience as error:
            raise CommandError(error.message) from error
        with tqdm(total=run.total, unit="question", desc=f"Verify-all '{run.label}'", disable=as_json) as bar:
            if inline:
                for item_id in run.items.values_list("pk", flat=True):
                    verify_run_item(item_id=item_id)
                    bar.update(1)
            else:
                deadline = time.monotonic() + timeout
                while True:
                    run.refresh_from_db()
                    done, _ = run_progress(run)
                    bar.update(done - bar.n)
                    if run.status != RunStatus.RUNNING:
                        break
                    if time.monotonic() > deadline:
                        raise CommandError(
                            f"run {run.pk} did not finish within {timeout:.0f}s; is a worker running?"
                        )
                    time.sleep(0.5)
        run.refresh_from_db()
        if as_json:
            report = report_shown(run)
            shown = report.as_dict() if report else {}
            self.stdout.write(
                json.dumps(
                    {"run": run.pk, "label": run.label, **shown, "audience": run.audience_named}, indent=2
                )
            )
        else:
            self._print(run)

    def _print(self, run: VerifyRun) -> None:
        report = report_shown(run)
        if report is None:
            raise CommandError(RUN_FAILED)
        self.stdout.write(
            f"\nVerify-all '{run.label}' (run {run.pk}): {report.questions} questions, "
            f"{report.claims} claims, {report.seconds}s, {report.errors} errors"
        )
        self.stdout.write(f"  Asked as: {run.audience_named}")
        self.stdout.write(f"  Judges that ran: {report.judges_named}")
        for key, label in FIGURES:
            value = getattr(report, key)
            self.stdout.write(f"  {label:<34} {'-' if value is None else f'{value:.1%}'}")
            if key == "out_of_scope_refused" and report.beyond_audience:
                self.stdout.write(f"    of them {report.beyond_audience} another audience could answer")
        if marks := report.readers_marks:
            rate = "-" if marks.rate is None else f"{marks.rate:.1%}"
            since = "the run before" if marks.since else "the first answer"
            self.stdout.write(
                f"  Readers marked unhelpful: {marks.unhelpful} of the {marks.marked} answers they marked "
                f"since {since} ({rate})"
            )
        if gate := report.refusal_gate:
            fitted = (
                f"calibrated for this garden on {gate.calibrated_at[:10]}"
                if gate.calibrated_at
                else "the settings' defaults (not calibrated for this garden)"
            )
            self.stdout.write(
                f"  Refusal gate: vector {gate.vector_threshold}, full text {gate.text_threshold}, "
                f"{fitted}; {gate.notes} notes."
            )
        self.stdout.write(
            "\nPer category (unverified claim rate, answers stating the expected fact, refusal rate, "
            "abstention rate):"
        )
        for category, figures in report.per_category.items():
            rates = (
                figures.unverified_claim_rate,
                figures.answered_rate,
                figures.refusal_rate,
                figures.abstention_rate,
            )
            self.stdout.write(
                f"  {category:<16} "
                + "  ".join(f"{'-' if rate is None else f'{rate:.1%}':>7}" for rate in rates)
            )
        if report.unverified_claims:
            self.stdout.write(f"\nUnverified claims ({len(report.unverified_claims)}):")
            for claim in report.unverified_claims:
                self.stdout.write(f"  [{claim.code}] {claim.claim}")
