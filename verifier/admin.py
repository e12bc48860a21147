"""The verifier's records, to look into: verifications with their claims and votes, reviews, what model calls
spent (`Spend`) and the judge's parameter versions. All are read-only here: each records what a judge, a model or
an editor did (or what it cost), and an edit would falsify it."""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import pluralize
from django.utils import timezone

from verifier.models import (
    ApiToken,
    Claim,
    CriticFinding,
    JudgeParameters,
    Review,
    Spend,
    Verification,
    Vote,
)


class RecordOnly:
    """Shown, never added, changed or deleted (for model admins and inlines alike)."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class ClaimInline(RecordOnly, admin.TabularInline[Claim, Verification]):
    model = Claim
    fields = ["ordinal", "text", "is_claim", "status", "quote", "passage", "confidence", "flags", "escalated"]
    show_change_link = True  # to the claim's votes and reviews

    def get_queryset(self, request: HttpRequest) -> QuerySet[Claim]:
        return super().get_queryset(request).select_related("passage__article")


class FindingInline(RecordOnly, admin.TabularInline[CriticFinding, Verification]):
    model = CriticFinding
    fields = ["critic_name", "severity", "passed", "message", "error", "latency_ms"]


@admin.register(Verification)
class VerificationAdmin(RecordOnly, admin.ModelAdmin[Verification]):
    list_display = [
        "answer",
        "status",
        "verdict",
        "answers_question",
        "risk_label",
        "risk_score",
        "judges",
        "flags",
        "mode",
        "blocked",
        "cost_usd",
        "created_at",
    ]
    list_filter = ["status", "verdict", "answers_question", "mode", "blocked", "local_only", "budget_held"]
    list_select_related = ["answer__question"]
    search_fields = ["answer__question__text", "answer__text", "error", "judge_errors"]
    date_hierarchy = "created_at"
    inlines = [ClaimInline, FindingInline]


class VoteInline(RecordOnly, admin.TabularInline[Vote, Claim]):
    model = Vote
    fields = ["judge", "role", "status", "quote", "source_number", "confidence", "flags"]


class ReviewInline(RecordOnly, admin.TabularInline[Review, Claim]):
    model = Review
    fields = ["decision", "judged_status", "correct_status", "note", "reviewer", "created_at"]
    readonly_fields = ["created_at"]  # not editable, so no form field: shown as it was recorded

    def get_queryset(self, request: HttpRequest) -> QuerySet[Review]:
        return super().get_queryset(request).select_related("reviewer")


@admin.register(Claim)
class ClaimAdmin(RecordOnly, admin.ModelAdmin[Claim]):
    list_display = ["__str__", "verification", "ordinal", "status", "confidence", "escalated"]
    list_filter = ["status", "is_claim", "escalated"]
    search_fields = ["text", "quote"]
    list_select_related = ["verification"]
    inlines = [VoteInline, ReviewInline]


@admin.register(Review)
class ReviewAdmin(RecordOnly, admin.ModelAdmin[Review]):
    list_display = ["claim", "decision", "judged_status", "correct_status", "reviewer", "created_at"]
    list_filter = ["decision", "judged_status", "correct_status"]
    list_select_related = ["claim", "reviewer"]
    search_fields = ["claim__text", "note", "reviewer__username"]
    date_hierarchy = "created_at"


@admin.register(Spend)
class SpendAdmin(RecordOnly, admin.ModelAdmin[Spend]):
    list_display = [
        "created_at",
        "purpose",
        "model",
        "settled",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "user",
        "token",
    ]
    list_filter = ["purpose", "settled", "model"]
    list_select_related = ["user", "token"]
    search_fields = ["model", "user__username", "token__prefix"]
    date_hierarchy = "created_at"


@admin.register(ApiToken)
class ApiTokenAdmin(RecordOnly, admin.ModelAdmin[ApiToken]):
    """Personal API tokens, to find one (by its owner, name or first characters) and revoke it, e.g. one that
    leaked; a token itself is never stored, so it cannot be shown."""

    list_display = ["name", "user", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["user"]
    search_fields = ["name", "prefix", "user__username"]
    exclude = ["digest", "password_marker"]
    actions = ["revoke"]

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        revoked = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{revoked} token{pluralize(revoked)} revoked.")

    def has_revoke_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_superuser)


@admin.register(JudgeParameters)
class JudgeParametersAdmin(RecordOnly, admin.ModelAdmin[JudgeParameters]):
    """Versions of the local judge: retraining and rollback are operators' actions on the logs page, where the
    acceptance checks run; here they are only read."""

    list_display = ["version", "source", "status", "active", "created_by", "created_at"]
    list_filter = ["status", "source", "active"]
    list_select_related = ["created_by"]
