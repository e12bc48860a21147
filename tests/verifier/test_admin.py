"""The verifier's records (and evaluation's Verify-all runs) in the admin: listed and shown to a superuser, never added, changed or deleted."""

from dataclasses import dataclass
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.db.models import Model

from claimcheck.terms import ClaimStatus, JudgeMode
from evaluation.models import GoldenQuestion, RunItemStatus, RunStatus, VerifyRun, VerifyRunItem
from tests.factories import verification_with_claims
from verifier.models import (
    ApiToken,
    Decision,
    JudgeParameters,
    Review,
    Spend,
    SpendPurpose,
    Verification,
)
from verifier.tokens import token_create

pytestmark = pytest.mark.django_db

NOTE = "The passage says the line reopened in 1982, not 1981."


@dataclass
class Records:
    verification: Verification
    review: Review
    run: VerifyRun
    spend: Spend
    token: ApiToken


def records_create(claims: int) -> Records:
    """One of each record, the verification with `claims` claims, the run with one item."""
    verification = verification_with_claims(claims)
    claim = verification.claims.get(ordinal=claims)
    editor = User.objects.create_user(f"editor-{verification.pk}")
    review = Review.objects.create(
        claim=claim,
        reviewer=editor,
        decision=Decision.JUDGE_WRONG,
        judged_status=ClaimStatus.VERIFIED,
        correct_status=ClaimStatus.CONTRADICTED,
        note=NOTE,
    )
    golden = GoldenQuestion.objects.create(
        code=f"admin-{verification.pk}", category="factual", question="When did Ashcombe station reopen?"
    )
    run = VerifyRun.objects.create(
        label=f"Nightly {verification.pk}", status=RunStatus.DONE, mode=JudgeMode.LOCAL, total=1
    )
    VerifyRunItem.objects.create(
        run=run, golden=golden, answer=verification.answer, status=RunItemStatus.DONE, seconds=1.5
    )
    token, _ = token_create(user_id=editor.pk, name=f"laptop {verification.pk}")
    spend = Spend.objects.create(
        purpose=SpendPurpose.VERIFICATION,
        model=f"claude-test-{verification.pk}",
        input_tokens=1234,
        output_tokens=56,
        cost_usd=Decimal("0.012345"),
        user=editor,
        token=token,
    )
    return Records(verification, review, run, spend, token)


@pytest.fixture
def records() -> Records:
    return records_create(3)


def shown(records: Records) -> dict[str, tuple[Model, list[str], list[str]]]:
    """Per admin: the record, what its changelist row shows, what its change page shows (inlines included)."""
    verification, review, run, spend = records.verification, records.review, records.run, records.spend
    answer = verification.answer
    return {
        "verifier/verification": (
            verification,
            [f"answer {answer.pk} to What does the garden say?", "Grounded"],
            ["Grounded", "Claim 3 is in the garden [3].", "safety"],
        ),
        "verifier/claim": (
            review.claim,
            ["verified: Claim 3 is in the garden [3]."],
            ["Claim 3 is in the garden [3].", "claude-test", "Judge wrong", NOTE],
        ),
        "verifier/review": (
            review,
            [
                "verified: Claim 3 is in the garden [3].",
                "Judge wrong",
                "Contradicted",
                f"editor-{verification.pk}",
            ],
            ["Contradicted", NOTE],
        ),
        "evaluation/verifyrun": (
            run,
            [run.label],
            [run.label, f"admin-{verification.pk}: When did Ashcombe station reopen?"],
        ),
        "verifier/spend": (
            spend,
            [spend.model, "0.012345", f"editor-{verification.pk}", f"laptop {verification.pk}"],
            [spend.model, "1234", "0.012345"],
        ),
        "verifier/apitoken": (
            records.token,
            [records.token.name, records.token.prefix, f"editor-{verification.pk}"],
            [records.token.name, records.token.prefix],
        ),
        "verifier/judgeparameters": (
            JudgeParameters.objects.get(version=1),
            ["Shipped with the code (params.json)", "Kept"],
            ["The parameters committed with the code", "feature_names"],
        ),
    }


# Each admin by its address: the Verify-all runs are evaluation's.
ADMINS = [
    "verifier/verification",
    "verifier/claim",
    "verifier/review",
    "evaluation/verifyrun",
    "verifier/spend",
    "verifier/judgeparameters",
    "verifier/apitoken",
]


@pytest.mark.parametrize("name", ADMINS)
def test_a_superuser_finds_each_record_listed_and_shown(admin_client, records, name):
    record, listed, detailed = shown(records)[name]

    changelist = admin_client.get(f"/admin/{name}/")
    assert changelist.status_code == 200
    for text in listed:
        assert text in changelist.content.decode(), text

    change = admin_client.get(f"/admin/{name}/{record.pk}/change/")
    assert change.status_code == 200
    for text in detailed:
        assert text in change.content.decode(), text


@pytest.mark.parametrize("name", ADMINS)
def test_no_record_is_added_changed_or_deleted_in_the_admin(admin_client, records, name):
    record = shown(records)[name][0]
    before = {field.attname: getattr(record, field.attname) for field in record._meta.concrete_fields}
    change_url = f"/admin/{name}/{record.pk}/change/"

    assert admin_client.get(f"/admin/{name}/add/").status_code == 403
    assert admin_client.post(f"/admin/{name}/add/", {}).status_code == 403
    assert admin_client.post(change_url, {}).status_code == 403
    assert admin_client.get(f"/admin/{name}/{record.pk}/delete/").status_code == 403
    assert admin_client.post(f"/admin/{name}/{record.pk}/delete/", {"post": "yes"}).status_code == 403
    changelist = admin_client.get(f"/admin/{name}/").content.decode()
    assert f"/admin/{name}/add/" not in changelist and "delete_selected" not in changelist

    record.refresh_from_db()
    assert {field.attname: getattr(record, field.attname) for field in record._meta.concrete_fields} == before


# The session and user, the row count (filtered and in all), the rows, the choices of the model filter and the
# dates: never a query per row.
MAX_CHANGELIST_QUERIES = 8


@pytest.mark.parametrize("name", ADMINS)
def test_a_changelist_costs_the_same_queries_for_more_records(
    admin_client, django_assert_max_num_queries, records, name
):
    def queries() -> int:
        with django_assert_max_num_queries(MAX_CHANGELIST_QUERIES) as captured:
            assert admin_client.get(f"/admin/{name}/").status_code == 200
        return len(captured)

    few = queries()
    for _ in range(3):
        records_create(20)
    assert queries() == few
