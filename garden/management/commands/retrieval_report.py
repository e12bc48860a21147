"""`python manage.py retrieval_report [--golden FILE] [--calibrate] [--conversations [FILE]] [--as USERNAME]`:
retrieval figures on the golden set, and on golden conversations' follow-ups beside first questions, asked as the
anonymous reader or as the account `--as` names (its audiences' notes too); `asked_as` says which.
`--self-calibrate`: the gate fitted to probes of the garden, without a golden set. With a served re-ranker configured
(`RERANK_URL`), `rerank` gives recall@5 with it and without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.test import override_settings

from garden.answering.conversation_report import conversations_measure
from garden.answering.retrieval import Thresholds, calibration_in_force
from garden.answering.retrieval_report import calibrate as calibrate_thresholds
from garden.answering.retrieval_report import calibration_store, held_out, measure, observe, rerank_measure
from garden.answering.self_calibration import self_calibrate as probes_calibrate
from garden.answering.self_calibration import self_calibrate_store
from garden.golden import CONVERSATIONS_FILE, DEFAULT_FILE, conversations_load, golden_load
from garden.models import CalibrationSource
from garden.readers import NO_SUCH_ACCOUNT as NO_ACCOUNT
from garden.readers import NoSuchAccount, account_named, reader_described, reader_of
from garden.sync.reembedding import passages_reembed
from providers.embeddings import EmbeddingBackend, embedder
from providers.rerank import rerank_config

STORED = (
    "Stored for {embedder}: vector {vector}, text {text}; the refusal gate uses them from now on. On questions "
    "they were not fitted on (half the golden set each way) they refused {refused} of out-of-scope questions "
    "and answered {answered} of in-scope ones; of their refusals, {precision} were out of scope."
)
NO_SUCH_ACCOUNT = f"{NO_ACCOUNT} Nothing was measured."
STORED_PROBES = (
    "Stored for {embedder} from {in_scope} in-scope and {out_of_scope} out-of-scope probes: vector {vector}, "
    "text {text}. On probes they were not fitted on they refused {refused} of out-of-scope ones and answered "
    "{answered} of in-scope ones."
)
GOLDEN_WINS = "The golden-set calibration of {date} stays in force: a golden set wins over probes."
NOT_STORED_BACKEND = "Not stored: measured as if embedded with {backend}, which is not the garden's embedder."


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


class Command(BaseCommand):
    help = (
        "Print recall@5 and refusal-gate figures on the golden set as JSON; --calibrate fits the gate's "
        "thresholds to this garden and stores them where the gate reads them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--golden", type=Path, default=DEFAULT_FILE)
        parser.add_argument(
            "--calibrate",
            action="store_true",
            help="Fit the thresholds to this garden's golden set and store them (the gate uses them at once).",
        )
        parser.add_argument(
            "--self-calibrate",
            action="store_true",
            help="Fit the thresholds to probes of the garden (no golden set needed) and store them; a golden-set "
            "calibration, if there is one, stays in force.",
        )
        parser.add_argument(
            "--conversations",
            type=Path,
            nargs="?",
            const=CONVERSATIONS_FILE,
            help="Also score the follow-ups of golden conversations (default: the sample garden's) beside the "
            "golden set's first questions, with the thresholds in force.",
        )
        parser.add_argument(
            "--backend",
            choices=list(EmbeddingBackend),
            help="Measure as if the garden were embedded with this backend: its passages are re-embedded and the "
            "questions embedded with it, in a transaction rolled back afterwards (nothing stored changes).",
        )
        parser.add_argument(
            "--as",
            dest="username",
            default="",
            help="Ask as this account, as `ask --as` does: its audiences' notes are searched too (default: the "
            "anonymous reader, the default audience's notes).",
        )

    def handle(
        self,
        *args: Any,
        golden: Path,
        calibrate: bool,
        backend: str | None,
        conversations: Path | None = None,
        username: str = "",
        self_calibrate: bool = False,
        **options: Any,
    ) -> None:
        try:
            user = account_named(username)
        except NoSuchAccount:
            raise CommandError(NO_SUCH_ACCOUNT.format(username=username)) from None
        if self_calibrate:
            self.stdout.write(json.dumps(self._self_calibrate(), indent=2))
            return
        reader = reader_of(user)
        report: dict[str, Any] = {"asked_as": reader_described(user)}
        fitted: tuple[Thresholds, dict[str, Any], dict[str, Any]] | None = None
        with transaction.atomic():
            with override_settings(**({"EMBEDDING_BACKEND": backend} if backend else {})):
                if backend:
                    report["backend"] = backend
                    report["reembedded_passages"], _ = passages_reembed()
                questions = golden_load(golden)
                observed = observe(questions, reader)
                report["configured"] = measure(observed, Thresholds.from_settings())
                if calibration_in_force() is not None:
                    report["in_force"] = measure(observed, Thresholds.in_force())
                if (reranker := rerank_config()) is not None:
                    report["rerank"] = rerank_measure(observed, Thresholds.in_force(), reranker)
                if calibrate:
                    thresholds = calibrate_thresholds(observed)
                    figures = measure(observed, thresholds)
                    expected = held_out(observed)
                    report["calibrated"] = {**figures, "held_out": expected}
                    fitted = (thresholds, figures, expected)
                if conversations is not None:
                    report["conversations"] = conversations_measure(
                        conversations_load(conversations), questions, Thresholds.in_force(), reader
                    )
            transaction.set_rollback(True)
        if fitted is not None:
            thresholds, figures, expected = fitted
            if backend:
                report["stored"] = NOT_STORED_BACKEND.format(backend=backend)
            else:
                calibration_store(thresholds, golden=str(golden), figures=figures, expected=expected)
                report["stored"] = STORED.format(
                    embedder=embedder(),
                    vector=thresholds.vector,
                    text=thresholds.text,
                    refused=_share(expected["out_of_scope_refused"]),
                    answered=_share(expected["in_scope_answered"]),
                    precision=_share(expected["refusal_precision"]),
                )
        self.stdout.write(json.dumps(report, indent=2))

    def _self_calibrate(self) -> dict[str, Any]:
        result = probes_calibrate()
        self_calibrate_store(result)
        expected = result.expected
        report: dict[str, Any] = {
            "probes": result.probes,
            "configured": result.configured,
            "self_calibrated": {**result.figures, "held_out": expected},
            "stored": STORED_PROBES.format(
                embedder=embedder(),
                vector=result.thresholds.vector,
                text=result.thresholds.text,
                refused=_share(expected["out_of_scope_refused"]),
                answered=_share(expected["in_scope_answered"]),
                **result.probes,
            ),
        }
        in_force = calibration_in_force()
        if in_force is not None and in_force.source == CalibrationSource.GOLDEN:
            report["in_force"] = GOLDEN_WINS.format(date=f"{in_force.created_at:%Y-%m-%d %H:%M}")
        return report
