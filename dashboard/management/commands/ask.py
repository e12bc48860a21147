"""`python manage.py ask "QUESTION" [--json] [--wait] [--conversation ID] [--as USERNAME]`: the whole flow from
the command line, as the anonymous reader (the default audience's notes) or as the account `--as` names (its
audiences' too)."""

from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from claimcheck.terms import ClaimStatus, Verdict
from dashboard.actions.asking import answer_ask, answer_seen
from dashboard.actions.callers import Operator, caller_reader
from dashboard.actions.refusals import Refused
from dashboard.shapes import shape_json
from dashboard.shapes.answers import answer_shape
from dashboard.shapes.verdicts import verdict_shape
from garden.answering.synthesis import BUDGET_SPENT
from garden.readers import NO_SUCH_ACCOUNT as NO_ACCOUNT
from garden.readers import NoSuchAccount, account_named
from verifier.models import Verification

NO_SUCH_ACCOUNT = f"{NO_ACCOUNT} Nothing was asked."
NOT_ANSWERED = "the judge found that none of its claims says what was asked."


class Command(BaseCommand):
    help = "Ask the garden a question and print the answer, its sources and the pre-flight."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--json", action="store_true", dest="as_json", help="Print the answer as JSON.")
        parser.add_argument("--wait", action="store_true", help="Wait for the verification to finish.")
        parser.add_argument("--timeout", type=float, default=120.0, help="Seconds --wait waits at most.")
        parser.add_argument(
            "--conversation",
            help="Ask a follow-up in this conversation (the id an earlier answer printed); without it, a new "
            "conversation starts.",
        )
        parser.add_argument(
            "--as",
            dest="username",
            default="",
            help="Ask as this account: its audiences' notes are searched too (default: the anonymous reader).",
        )

    def handle(
        self,
        *args: Any,
        question: str,
        as_json: bool,
        wait: bool,
        timeout: float,
        conversation: str | None = None,
        username: str = "",
        **options: Any,
    ) -> None:
        try:
            user = account_named(username)
        except NoSuchAccount:
            raise CommandError(NO_SUCH_ACCOUNT.format(username=username)) from None
        caller = Operator(user)
        try:
            answer = answer_ask(caller, question, conversation)
        except Refused as refused:
            raise CommandError(refused.message) from None
        if wait:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                verification = Verification.objects.filter(answer=answer).first()
                if verification is None or verification.finished:
                    break
                time.sleep(0.5)
        loaded = answer_seen(caller, answer)  # (its verdict may have come meanwhile)
        payload = shape_json(answer_shape(loaded, reader=caller_reader(caller)))
        if (
            wait
        ):  # the whole verdict, as GET /api/answers/{id}/verdict gives it to an operator (who runs this)
            verdict = verdict_shape(loaded, reader=caller_reader(caller), rejected_quotes=True)
            payload["verification"] = shape_json(verdict)
        if as_json:
            self.stdout.write(_dumps(payload))
            return
        self._print(payload)
        if wait and payload["verification"]["status"] in {"pending", "running"}:
            self.stderr.write(
                f"The verdict did not arrive within {timeout:g} s. Is a Celery worker running? "
                "(`make run` starts one.) The answer page shows it once it is done."
            )

    def _print(self, payload: dict[str, Any]) -> None:
        preflight = payload["preflight"]
        self.stdout.write(
            f"[pre-flight: {preflight['domain']}, {preflight['risk']} risk] {preflight['suggestion']}"
        )
        if payload["searched_for"]:
            self.stdout.write(f"Searched for: {payload['searched_for']}")
        if payload["refused"]:
            self.stdout.write(f"RETRIEVAL REFUSED: {payload['refusal_reason']}")
        if payload["abstained"]:
            self.stdout.write(f"{payload['answers_question_label'].upper()}: the notes near it do not say.")
        elif not payload["answers_question"] and not (payload["refused"] or payload["error"]):
            self.stdout.write(f"{payload['answers_question_label'].upper()}: {NOT_ANSWERED}")
        if payload["error"]:
            self.stdout.write(f"ERROR: {payload['error']}")
        if payload["budget_held"]:
            self.stdout.write(BUDGET_SPENT)
        if payload["model_failed"]:
            self.stdout.write(payload["model_failed"])
        self.stdout.write("")
        if payload["verification"].get("blocked"):
            self.stdout.write(
                "HELD BACK BY THE SAFETY CHECK: this answer seems to instruct something unsafe."
            )
        self.stdout.write(payload["answer"])
        if payload["citations"]:
            self.stdout.write("")
            for citation in payload["citations"]:
                self.stdout.write(f"[{citation['number']}] {citation['cited_as']} ({citation['article']})")
        verification = payload["verification"]
        self.stdout.write(f"\nverification: {verification['status'] or 'none'}")
        self.stdout.write(f"conversation: {payload['conversation']} (turn {payload['turn']})")
        if verification.get("compact"):
            self._print_verdict(verification)

    def _print_verdict(self, verification: dict[str, Any]) -> None:
        """The compact line, the disclosure, then each claim with its status label, quote and flags."""
        verdict = verification["verdict"]
        if not verification["answers_question"]:  # grounded or not, that is what the reader needs to know
            said = verification["answers_question_label"].lower()
            verdict = said if verdict == Verdict.GROUNDED else f"{verdict}, {said}"
        self.stdout.write(f"{verification['compact']} verdict: {verdict}")
        if verification["disclosure"]:
            self.stdout.write(verification["disclosure"])
        for claim in verification["claims"]:
            flags = f" (flags: {', '.join(claim['flags'])})" if claim["flags"] else ""
            self.stdout.write(f"  [{ClaimStatus(claim['status']).label}] {claim['text']}{flags}")
            if claim["quote"]:
                self.stdout.write(f"      “{claim['quote']}” [{claim['source_index']}]")


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, indent=2, ensure_ascii=False)
