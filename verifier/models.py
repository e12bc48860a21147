"""Verifications of answers: claims, their statuses, every juror's vote, the verdict and its cost."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from claimcheck.terms import ClaimStatus, JudgeMode, JurorRole, Severity, Verdict, choices
from claimcheck.verdict import compact_line
from garden.models import Answer, Passage
from verifier.scopes import TokenScope


class VerificationStatus(models.TextChoices):
    PENDING = "pending", "Waiting for the judge"
    RUNNING = "running", "Being checked"
    DONE = "done", "Checked"
    ERROR = "error", "Check failed"


FINISHED = frozenset({VerificationStatus.DONE, VerificationStatus.ERROR})  # the judge has nothing left to do


class ParametersSource(models.TextChoices):
    SHIPPED = "shipped", "Shipped with the code (params.json)"
    RETRAINED = "retrained", "Retrained with editors' reviews"


class ParametersStatus(models.TextChoices):
    RUNNING = "running", "Retraining"
    KEPT = "kept", "Kept"
    REFUSED = "refused", "Refused"
    ERROR = "error", "Retraining failed"


class JudgeParameters(models.Model):
    """One version of the local judge's calibrated parameters; the active one judges new verifications.

    A retraining creates its version at once (running), then fills in the parameters and the report with its
    acceptance figures: kept (and made active) or refused, with the reason in the report.
    """

    version = models.PositiveIntegerField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=10, choices=ParametersSource.choices)
    status = models.CharField(
        max_length=10, choices=ParametersStatus.choices, default=ParametersStatus.RUNNING
    )
    params = models.JSONField(default=dict, blank=True, help_text="The params.json document.")
    report = models.JSONField(default=dict, blank=True, help_text="The acceptance figures, or why it failed.")
    active = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["active"], condition=models.Q(active=True), name="one_active_judge"
            )
        ]
        permissions = [("retrain_judge", "Can retrain the local judge and roll its parameters back")]

    def __str__(self) -> str:
        return f"judge parameters v{self.version} ({self.status}{', active' if self.active else ''})"


class Verification(models.Model):
    """The post-flight check of one answer; its status moves pending -> running -> done | error."""

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="verification")
    status = models.CharField(
        max_length=10, choices=VerificationStatus.choices, default=VerificationStatus.PENDING
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    mode = models.CharField(max_length=10, choices=choices(JudgeMode), blank=True)
    verdict = models.CharField(max_length=15, choices=choices(Verdict), blank=True)
    risk_score = models.PositiveSmallIntegerField(null=True, blank=True)
    risk_label = models.CharField(max_length=2, blank=True)
    delta_score = models.FloatField(null=True, blank=True)
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    judges = models.PositiveSmallIntegerField(default=0, help_text="Distinct judges that voted.")
    flags = models.PositiveSmallIntegerField(default=0, help_text="Flags raised across all claims.")
    local_only = models.BooleanField(default=False)
    disclosure = models.TextField(
        blank=True, help_text="Why the stronger judges did not run, if they did not."
    )
    budget_held = models.BooleanField(
        default=False, help_text="The daily budget kept Claude, or its tie-breaker, from judging."
    )
    judge_errors = models.TextField(blank=True)
    blocked = models.BooleanField(default=False, help_text="A critic blocked the answer (e.g. safety).")
    answers_question = models.BooleanField(
        null=True,
        blank=True,
        help_text="Whether the answer answers its question: its claims say what it takes as given and give the "
        "kind of answer it asks for (the Claude juror's word when it ran, else the local judge's); empty until "
        "the judge has decided.",
    )
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal(0))
    latency_ms = models.PositiveIntegerField(default=0)
    judge_parameters = models.ForeignKey(
        JudgeParameters,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The local judge's parameters version that voted.",
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("view_logs", "Can read the answer logs and the spending on models")]

    def __str__(self) -> str:
        return f"verification of answer {self.answer_id}: {self.status}"

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def compact(self) -> str:
        """The compact line, e.g. `[Hall: ⚠ · 78/100 · 2 judges · 3 flags]`, or `... · local judge · ...` when the
        local judge's verdict is the one shown, `[Hall: ~ · does not answer · ...]` when the answer does not
        answer its question."""
        if not self.finished or self.risk_score is None:
            return ""
        return compact_line(
            risk_label=self.risk_label,
            risk_score=self.risk_score,
            judges=self.judges,
            local_only=self.local_only,
            flags=self.flags,
            answers_question=self.answers_question,
        )


class SpendPurpose(models.TextChoices):
    ANSWER = "answer", "Writing answers"
    VERIFICATION = "verification", "Verifying an answer"
    CHECK = "check", "Fact-checking text"
    BATCH = "batch", "Batch scoring"
    CONDENSE = "condense", "Condensing follow-up questions"


# A token's name is a label its owner reads in a list ("laptop", "Claude Desktop"), not a description.
TOKEN_NAME_MAX_CHARS = 100


class ApiToken(models.Model):
    """A personal API token: `Authorization: Bearer <token>` acts as its user, with their role and what they may
    see. Only the SHA-256 digest of the token is kept (it is shown once, when created), with its first few
    characters to tell tokens apart in a list. A revoked token stays, so that the ledger keeps naming it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=TOKEN_NAME_MAX_CHARS)
    prefix = models.CharField(max_length=12, help_text="The token's first characters, which are not secret.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, in hex.")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(
        help_text="From then on the token is refused (API_TOKEN_DAYS after made)."
    )
    scopes = ArrayField(
        models.CharField(max_length=8, choices=choices(TokenScope)),
        default=list,
        help_text="What the token may do (verifier.scopes): read, ask, check.",
    )
    password_marker = models.CharField(
        max_length=64,
        help_text="SHA-256 of its user's password hash when made: a new password ends the token.",
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    def allows(self, scope: TokenScope) -> bool:
        return scope.value in self.scopes


class SignInIdentity(models.Model):
    """An account as the team's OpenID Connect provider knows it: its issuer and subject (`sub`, which the
    provider never gives to anyone else) name one user here for good, whatever their name or mail becomes.

    `audiences_given` and `roles_given` are what the provider's groups claim gave at the last sign-in: the next
    sign-in takes away those its claim no longer gives, and only those, so that a membership an operator gave by
    hand (the admin, `manage.py audiences`) stays."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_identities"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    audiences_given = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    roles_given = ArrayField(models.CharField(max_length=20), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    signed_in_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_issuer_subject")
        ]
        verbose_name_plural = "sign-in identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class Spend(models.Model):
    """What one model call cost, under its purpose (a judgement, an answer, a condensed follow-up; Claude's or a
    served model's): the ledger behind the daily budget (`verifier.budget`).

    A judgement is a juror's or the tie-breaker's pass over a text's claims: one call, or a few side by side
    for a long text. Every judgement writes a row, whatever it was for (an answer, a fact-check, a batch), and
    even if its verification is later redone: the money was spent either way. A row is booked at the most
    the call can cost before it is made, and settled at what it was billed.
    """

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    purpose = models.CharField(max_length=12, choices=SpendPurpose.choices)
    anonymous = models.BooleanField(
        default=False,
        db_default=False,  # in the database too: rows that older migrations write without the field are not
        help_text="Spent for a visitor who was not signed in (ANONYMOUS_CLAUDE_DAILY_USD caps these).",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The signed-in reader the call was made for, when there was one.",
    )
    token = models.ForeignKey(
        ApiToken,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="spends",
        help_text="The personal API token the call came through, when it came through one.",
    )
    model = models.CharField(max_length=100, blank=True)
    settled = models.BooleanField(
        default=True, help_text="False while the call is in flight: the cost is then the most it can be."
    )
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=10, decimal_places=6, default=Decimal(0))

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.purpose}: ${self.cost_usd} on {self.created_at:%Y-%m-%d %H:%M}"


class Claim(models.Model):
    """A sentence or statement of an answer, with its span, final status and supporting quote."""

    verification = models.ForeignKey(Verification, on_delete=models.CASCADE, related_name="claims")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    is_claim = models.BooleanField(default=True, help_text="False for meta-statements, which are not scored.")
    status = models.CharField(max_length=15, choices=choices(ClaimStatus), blank=True)
    quote = models.TextField(blank=True)
    source_number = models.PositiveIntegerField(null=True, blank=True)
    passage = models.ForeignKey(Passage, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    confidence = models.FloatField(null=True, blank=True)
    flags = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    escalated = models.BooleanField(default=False)

    class Meta:
        ordering = ["verification", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["verification", "ordinal"], name="unique_claim_ordinal")
        ]
        permissions = [("review_claim", "Can review the claims the judge flagged")]

    def __str__(self) -> str:
        return f"{self.status or 'not a claim'}: {self.text[:60]}"

    def get_absolute_url(self) -> str:
        """The claim in its answer's verdict. Needs `verification.answer` loaded."""
        return f"{self.verification.answer.get_absolute_url()}#claim-{self.pk}"


class Vote(models.Model):
    """One judge's vote on one claim, after the quote gate."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="votes")
    judge = models.CharField(max_length=60, help_text="'local' or the Claude model name.")
    role = models.CharField(max_length=12, choices=choices(JurorRole), default=JurorRole.JUROR)
    status = models.CharField(max_length=15, choices=choices(ClaimStatus))
    quote = models.TextField(blank=True)
    source_number = models.PositiveIntegerField(null=True, blank=True)
    confidence = models.FloatField()
    flags = ArrayField(models.CharField(max_length=40), default=list, blank=True)

    class Meta:
        ordering = ["claim", "id"]

    def __str__(self) -> str:
        return f"{self.judge} ({self.role}): {self.status}"


class Decision(models.TextChoices):
    JUDGE_RIGHT = "judge_right", "Judge right"
    JUDGE_WRONG = "judge_wrong", "Judge wrong"
    NOTE = "note", "Note only"


class Review(models.Model):
    """An editor's decision on a flagged claim: the judge was right, or wrong (with the correct status)."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    decision = models.CharField(max_length=12, choices=Decision.choices)
    judged_status = models.CharField(max_length=15, choices=choices(ClaimStatus))
    correct_status = models.CharField(max_length=15, choices=choices(ClaimStatus), blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} on claim {self.claim_id}"


# Who marked: "user:<id>" for an account, "session:<key>" for a visitor not signed in (`verifier.marks.marker_of`).
MARKER_MAX_CHARS = 80


class AnswerMark(models.Model):
    """A reader's word on a whole answer, helpful or not: one per reader per answer, a second replaces the first.
    Only its reader sees it; the operators' logs count the answers marked unhelpful."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="marks")
    marker = models.CharField(max_length=MARKER_MAX_CHARS)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, related_name="+")
    helpful = models.BooleanField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["answer", "marker"], name="one_mark_per_reader")]

    def __str__(self) -> str:
        return f"{'helpful' if self.helpful else 'not helpful'}: answer {self.answer_id}"


class ClaimReport(models.Model):
    """A reader's word that a claim is wrong, with an optional short note: one per reader per claim, a second
    replaces the first. Only its reader sees it, and the editors, in the review queue."""

    claim = models.ForeignKey(Claim, on_delete=models.CASCADE, related_name="reports")
    marker = models.CharField(max_length=MARKER_MAX_CHARS)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, related_name="+")
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["claim", "marker"], name="one_report_per_reader")]

    def __str__(self) -> str:
        return f"reported wrong: claim {self.claim_id}"


class CriticFinding(models.Model):
    """The result of one critic on an answer; severities are fixed by the critic, not by any model."""

    verification = models.ForeignKey(Verification, on_delete=models.CASCADE, related_name="findings")
    critic_name = models.CharField(max_length=40)
    severity = models.CharField(max_length=10, choices=choices(Severity))
    passed = models.BooleanField()
    message = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    error = models.TextField(
        blank=True, help_text="Set when the critic itself failed (it then passes: fail open)."
    )
    latency_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["verification", "critic_name"]

    def __str__(self) -> str:
        return f"{self.critic_name}: {'passed' if self.passed else self.severity}"
