"""The report of a Verify-all run, as a typed object: claim rates (unverified is the headline), the share of
answers that state the expected fact, refusals, per category, every unverified claim, and the judges that ran.

A run stores its report as JSON (`VerifyRun.report`, `RunReport.as_dict`); `RunReport.from_dict` reads it back,
reports stored before a figure existed included (the figure is then None).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Count
from django.utils import timezone

from claimcheck.terms import LOCAL_JUDGE, ClaimStatus, JurorRole
from evaluation.models import RunItemStatus, VerifyRun, VerifyRunItem
from garden.answering.retrieval import Thresholds, calibration_in_force
from garden.golden import OUT_OF_SCOPE, UNANSWERABLE
from garden.models import Answer, Article
from garden.readers import ANONYMOUS, Reader
from garden.selectors import ANSWER_WITHHELD
from verifier.marks import answers_unhelpful
from verifier.models import Claim, Vote

FIGURES = (
    ("verified_claim_rate", "Verified claim rate"),
    ("answered_rate", "Answers stating the expected fact"),
    ("unverified_claim_rate", "Unverified claim rate"),
    ("contradicted_claim_rate", "Contradicted claim rate"),
    ("refusal_rate", "Refusal rate"),
    ("abstention_rate", "Abstention rate"),
    ("out_of_scope_refused", "Correct refusals (out of scope)"),
    ("in_scope_answered", "In-scope questions answered"),
    ("in_scope_refused", "Wrong refusals (in scope)"),
)
NO_JUDGE = "no judge voted"
LOCAL_JUDGE_NAMED = "local judge"
CLAUDE_JUROR = "Claude juror ({model})"
CLAUDE_TIEBREAKER = "Claude tie-breaker ({model})"


@dataclass(frozen=True)
class Figures:
    """The figures of a set of questions: the whole run's, or one category's."""

    questions: int
    claims: int
    verified_claim_rate: float | None
    answered_rate: float | None
    unverified_claim_rate: float | None
    contradicted_claim_rate: float | None
    refusal_rate: float | None
    # Answers that said the notes near the question do not answer it; None in a report stored before abstentions.
    abstention_rate: float | None
    status_counts: dict[str, int]

    @classmethod
    def _fields_from(cls, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "questions": data.get("questions", 0),
            "claims": data.get("claims", 0),
            "verified_claim_rate": data.get("verified_claim_rate"),
            "answered_rate": data.get("answered_rate"),
            "unverified_claim_rate": data.get("unverified_claim_rate"),
            "contradicted_claim_rate": data.get("contradicted_claim_rate"),
            "refusal_rate": data.get("refusal_rate"),
            "abstention_rate": data.get("abstention_rate"),
            "status_counts": dict(data.get("status_counts") or {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Figures:
        return cls(**cls._fields_from(data))


@dataclass(frozen=True)
class RefusalGate:
    """The thresholds the gate used and what they were fitted to, with the garden's size: a refusal rate means
    little without them (one garden's rates move as it grows)."""

    vector_threshold: float
    text_threshold: float
    calibrated_at: str | None
    notes: int


@dataclass(frozen=True)
class UnverifiedClaim:
    code: str
    category: str
    question: str
    answer_id: int | None
    answer_url: str  # empty in a report stored before answers had addresses of their own: no link
    answer: str
    claim: str
    flags: list[str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UnverifiedClaim:
        return cls(
            code=data.get("code", ""),
            category=data.get("category", ""),
            question=data.get("question", ""),
            answer_id=data.get("answer_id"),
            answer_url=data.get("answer_url", ""),
            answer=data.get("answer", ""),
            claim=data.get("claim", ""),
            flags=list(data.get("flags") or []),
        )


@dataclass(frozen=True)
class JudgeRan:
    """A judge that voted in the run: 'local' or a Claude model, in the role it voted in, on how many claims."""

    judge: str
    role: str
    claims: int

    @property
    def name(self) -> str:
        if self.judge == LOCAL_JUDGE:
            return LOCAL_JUDGE_NAMED
        template = CLAUDE_TIEBREAKER if self.role == JurorRole.TIEBREAKER else CLAUDE_JUROR
        return template.format(model=self.judge)


@dataclass(frozen=True)
class ReadersMarks:
    """Readers' word on the answers the garden gave them since the run before (`since`, its start; None: since
    the first answer), up to this run's start: of the answers readers marked helpful or not, those at least one
    marked not helpful. Verify-all's own answers are not readers'."""

    since: str | None
    unhelpful: int
    marked: int

    @property
    def rate(self) -> float | None:
        return self.unhelpful / self.marked if self.marked else None


@dataclass(frozen=True)
class RunReport(Figures):
    """A finished run's figures (the fields of `Figures` are the whole run's). Out of scope are the golden set's
    out-of-scope questions and those another audience could answer (`beyond_audience` of them, counted in
    `out_of_scope_refused`, not in the in-scope figures); unanswerable questions are in neither scope's figures
    (their category's `answered_rate` is the share abstained on or refused); `per_category` keeps the golden
    set's categories."""

    out_of_scope_refused: float | None
    in_scope_refused: float | None
    in_scope_answered: float | None
    refusal_gate: RefusalGate | None
    errors: int
    seconds: float
    per_category: dict[str, Figures]
    unverified_claims: list[UnverifiedClaim]
    # None in a report stored before the judges were recorded: `report_shown` reads them from the votes.
    judges: list[JudgeRan] | None
    audience: str = ""  # the audience the run was asked as (empty: the default one, `evaluation.audiences`)
    beyond_audience: int = 0  # questions another audience could answer, asked as one that cannot see them
    readers_marks: ReadersMarks | None = None  # None in a report stored before readers marked answers

    @property
    def judges_named(self) -> str:
        """The judges that voted, as the page and the command say them, e.g. "local judge"."""
        return ", ".join(judge.name for judge in self.judges or []) or NO_JUDGE

    def as_dict(self) -> dict[str, Any]:
        """The report as stored and exported (JSON)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        gate = data.get("refusal_gate")
        judges = data.get("judges")
        return cls(
            **cls._fields_from(data),
            out_of_scope_refused=data.get("out_of_scope_refused"),
            in_scope_refused=data.get("in_scope_refused"),
            in_scope_answered=data.get("in_scope_answered"),
            refusal_gate=RefusalGate(**gate) if gate else None,
            errors=data.get("errors", 0),
            seconds=data.get("seconds", 0.0),
            per_category={
                category: Figures.from_dict(figures)
                for category, figures in (data.get("per_category") or {}).items()
            },
            unverified_claims=[
                UnverifiedClaim.from_dict(entry) for entry in data.get("unverified_claims") or []
            ],
            judges=None if judges is None else [JudgeRan(**judge) for judge in judges],
            audience=data.get("audience", ""),
            beyond_audience=data.get("beyond_audience", 0),
            readers_marks=ReadersMarks(**marks) if (marks := data.get("readers_marks")) else None,
        )


def stored_report(run: VerifyRun) -> RunReport | None:
    """The report the run stored, None while it has none (running, or failed before its report)."""
    return RunReport.from_dict(run.report) if run.report else None


def _rate(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def _figures(
    statuses: Counter[str], refused: int, questions: int, answered: int, checked: int, abstained: int
) -> dict[str, Any]:
    """The figures of a set of questions; `answered` of the `checked` questions (those with an expected fact)
    state it (for an unanswerable one: say the notes do not answer it)."""
    claims = sum(statuses.values())
    return {
        "questions": questions,
        "claims": claims,
        "verified_claim_rate": _rate(statuses[ClaimStatus.VERIFIED], claims),
        "answered_rate": _rate(answered, checked),
        "unverified_claim_rate": _rate(statuses[ClaimStatus.UNVERIFIED], claims),
        "contradicted_claim_rate": _rate(statuses[ClaimStatus.CONTRADICTED], claims),
        "refusal_rate": _rate(refused, questions),
        "abstention_rate": _rate(abstained, questions),
        "status_counts": {status.value: statuses[status.value] for status in ClaimStatus},
    }


def run_report(run: VerifyRun) -> RunReport:
    """The figures of a run: claim rates (unverified is the headline), the share of answers that state the
    expected fact, refusals, per category, every unverified claim, the judges that voted."""
    items = list(run.items.select_related("golden", "answer__question__retrieval"))
    answer_ids = [item.answer_id for item in items if item.answer_id]
    claims = list(
        Claim.objects.filter(verification__answer_id__in=answer_ids, is_claim=True).select_related(
            "verification"
        )
    )
    by_answer: dict[int, list[Claim]] = defaultdict(list)
    for claim in claims:
        by_answer[claim.verification.answer_id].append(claim)
    overall: Counter[str] = Counter()
    per_category: dict[str, Counter[str]] = defaultdict(Counter)
    refused_by_category: Counter[str] = Counter()
    abstained_by_category: Counter[str] = Counter()
    questions_by_category: Counter[str] = Counter()
    answered_by_category: Counter[str] = Counter()
    checked_by_category: Counter[str] = Counter()
    out_of_scope = out_of_scope_refused = 0
    unanswerable = unanswerable_refused = (
        0  # refused or abstained on, either is right: neither scope's figure
    )
    unverified = []
    for item in items:
        category = item.golden.category
        questions_by_category[category] += 1
        out_of_scope_here = category == OUT_OF_SCOPE or item.beyond_audience  # it must be refused
        out_of_scope += out_of_scope_here
        out_of_scope_refused += out_of_scope_here and item.answer is not None and item.answer.refused
        unanswerable_here = category == UNANSWERABLE and not out_of_scope_here
        unanswerable += unanswerable_here
        unanswerable_refused += unanswerable_here and item.answer is not None and item.answer.refused
        if item.answers_question is not None:
            checked_by_category[category] += 1
            answered_by_category[category] += item.answers_question
        answer = item.answer
        if answer is None:
            continue
        refused_by_category[category] += answer.refused
        abstained_by_category[category] += answer.abstained
        for claim in by_answer.get(answer.pk, []):
            overall[claim.status] += 1
            per_category[category][claim.status] += 1
            if claim.status == ClaimStatus.UNVERIFIED:
                unverified.append(
                    UnverifiedClaim(
                        code=item.golden.code,
                        category=category,
                        question=item.golden.question,
                        answer_id=answer.pk,
                        answer_url=answer.get_absolute_url(),
                        answer=answer.text,
                        claim=claim.text,
                        flags=list(claim.flags),
                    )
                )
    in_scope = len(items) - out_of_scope - unanswerable
    in_scope_refused = sum(refused_by_category.values()) - out_of_scope_refused - unanswerable_refused
    overall_figures = _figures(
        overall,
        sum(refused_by_category.values()),
        len(items),
        sum(answered_by_category.values()),
        sum(checked_by_category.values()),
        sum(abstained_by_category.values()),
    )
    return RunReport(
        **overall_figures,
        out_of_scope_refused=_rate(out_of_scope_refused, out_of_scope),
        in_scope_refused=_rate(in_scope_refused, in_scope),
        in_scope_answered=round(1 - in_scope_refused / in_scope, 4) if in_scope else None,
        refusal_gate=_refusal_gate(),
        errors=sum(item.status == RunItemStatus.ERROR for item in items),
        seconds=round((timezone.now() - run.started_at).total_seconds(), 1),
        per_category={
            category: Figures(
                **_figures(
                    per_category[category],
                    refused_by_category[category],
                    count,
                    answered_by_category[category],
                    checked_by_category[category],
                    abstained_by_category[category],
                )
            )
            for category, count in sorted(questions_by_category.items())
        },
        unverified_claims=unverified,
        judges=run_judges(run),
        audience=run.audience,
        beyond_audience=sum(item.beyond_audience and item.golden.category != OUT_OF_SCOPE for item in items),
        readers_marks=_readers_marks(run),
    )


def _readers_marks(run: VerifyRun) -> ReadersMarks:
    """What readers said of the answers given between the run before this one and this one (see `ReadersMarks`)."""
    since = (
        VerifyRun.objects.filter(started_at__lt=run.started_at)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    answers = Answer.objects.filter(created_at__lt=run.started_at).exclude(
        pk__in=VerifyRunItem.objects.exclude(answer=None).values("answer_id")
    )
    if since is not None:
        answers = answers.filter(created_at__gte=since)
    share = answers_unhelpful(answers)
    return ReadersMarks(
        since=since.isoformat() if since else None, unhelpful=share.unhelpful, marked=share.marked
    )


def _refusal_gate() -> RefusalGate:
    thresholds, calibration = Thresholds.in_force(), calibration_in_force()
    return RefusalGate(
        vector_threshold=thresholds.vector,
        text_threshold=thresholds.text,
        calibrated_at=calibration.created_at.isoformat() if calibration else None,
        notes=Article.objects.live().count(),
    )


def run_judges(run: VerifyRun) -> list[JudgeRan]:
    """The judges that voted on the claims of the run's answers, as their votes recorded them (not the judge
    mode configured: with no API key, or the day's budget spent, only the local judge votes whatever the mode):
    the local judge first, then Claude's jurors, then its tie-breakers."""
    answer_ids = run.items.filter(answer__isnull=False).values("answer_id")
    voted = (
        Vote.objects.filter(claim__verification__answer_id__in=answer_ids, claim__is_claim=True)
        .values_list("judge", "role")
        .annotate(claims=Count("claim", distinct=True))
        .order_by()
    )
    order = {JurorRole.JUROR.value: 0, JurorRole.TIEBREAKER.value: 1}
    return [
        JudgeRan(judge=judge, role=role, claims=claims)
        for judge, role, claims in sorted(
            voted, key=lambda row: (row[0] != LOCAL_JUDGE, order.get(row[1], 2), row[0])
        )
    ]


def report_shown(run: VerifyRun, reader: Reader = ANONYMOUS) -> RunReport | None:
    """The run's stored report as it may be shown today to `reader`: an answer whose sources have since been
    withheld (made private), or are of an audience not theirs, shows none of its text; a report stored before the judges were recorded names them from
    the votes. None while the run has no report."""
    report = stored_report(run)
    if report is None:
        return None
    ids = {entry.answer_id for entry in report.unverified_claims if entry.answer_id is not None}
    readable = set(Answer.objects.readable(reader).filter(pk__in=ids).values_list("pk", flat=True))
    return dataclasses.replace(
        report,
        unverified_claims=[
            entry
            if entry.answer_id in readable
            else dataclasses.replace(entry, answer=ANSWER_WITHHELD, claim=ANSWER_WITHHELD)
            for entry in report.unverified_claims
        ],
        judges=run_judges(run) if report.judges is None else report.judges,
    )
