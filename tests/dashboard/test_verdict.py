"""The verdict as readers and API clients see it, once the judge has run."""

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from mcp.server.mcpserver.exceptions import ToolError

from dashboard.actions.asking import ask
from dashboard.actions.callers import account_request
from dashboard.mcp_server import GardenTools
from garden.audiences import members_add
from garden.models import AnswerSource, Article
from garden.selectors import ANSWER_NOT_SHARED
from garden.sync import garden_import
from tests.factories import (
    STATION_QUOTE,
    garden_write,
    login,
    verification_with_claims,
    verified_by_claude,
    verify_station_answer,
)
from verifier.roles import OPERATOR, READER
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

QUESTION = "How long is the Harrowden Viaduct and how many arches does it have?"


@pytest.fixture
def checked_answer():
    answer = ask(QUESTION)
    verification_run(verification_id=answer.verification.pk)
    answer.verification.refresh_from_db()
    return answer


def test_the_answer_page_shows_claims_with_colour_and_a_text_label(client, checked_answer):
    html = client.get(checked_answer.get_absolute_url()).content.decode()
    verification = checked_answer.verification
    claim = verification.claims.filter(is_claim=True).first()
    assert f'class="claim status-{claim.status}"' in html
    assert f"[{claim.get_status_display()}]</a>" in html
    assert "<details>" in html and "Why: every juror" in html
    assert verification.compact in html
    assert "Only the weaker local judge ran" in html
    assert "Sources used" in html
    assert 'hx-trigger="every 2s"' not in html


def test_the_verdict_api_lists_claims_votes_and_scores(client, checked_answer):
    body = client.get(f"/api/answers/{checked_answer.public_id}/verdict").json()
    # Only the local judge ran (no key): its verdict gives the label, and the compact line says whose it is.
    assert body["status"] == "done" and body["local_only"] and body["risk_label"] in {"✓", "~", "⚠"}
    assert body["compact"].startswith(
        f"[Hall: {body['risk_label']} · {body['risk_score']}/100 · local judge · "
    )
    first = body["claims"][0]
    assert first["status"] in {
        "verified",
        "inferred",
        "unverified",
        "outdated",
        "misattributed",
        "contradicted",
    }
    assert first["votes"][0]["judge"] == "local"
    assert sum(body["counts"].values()) == len(body["claims"])


def test_the_verdict_api_before_the_judge_ran(client):
    answer = ask(QUESTION)
    body = client.get(f"/api/answers/{answer.public_id}/verdict").json()
    assert body["status"] == "pending" and body["claims"] == []
    assert client.get("/api/answers/987654/verdict").status_code == 404


def test_check_any_text_against_the_garden(client):
    login(client, "reader")
    response = client.post(
        "/api/check",
        {
            "text": "Harrowden Viaduct carries the railway across the River Kest. It was built of gold in 1066."
        },
        content_type="application/json",
    )
    body = response.json()
    assert response.status_code == 200
    assert body["claims"][0]["status"] == "verified" and body["claims"][0]["quote"]
    assert body["claims"][1]["status"] in {"unverified", "contradicted"}
    assert body["sources"] and body["sources"][0]["url"].startswith("/articles/")
    empty = client.post("/api/check", {"text": " "}, content_type="application/json")
    assert empty.status_code == 400 and empty.json()["error"]


def test_the_judges_tokens_and_cost_are_shown_under_why(client, claude):
    claude.set_default(verified_by_claude(STATION_QUOTE))
    verification = verify_station_answer()
    assert verification.input_tokens >= 900 and verification.cost_usd > 0

    html = client.get(verification.answer.get_absolute_url()).content.decode()
    assert (
        f"judge {verification.input_tokens}+{verification.output_tokens} tokens, ${verification.cost_usd}"
        in html
    )
    verdict = client.get(f"/api/answers/{verification.answer.public_id}/verdict").json()
    assert (verdict["input_tokens"], verdict["output_tokens"]) == (
        verification.input_tokens,
        verification.output_tokens,
    )
    assert verdict["cost_usd"] == str(verification.cost_usd)


# Every open answer page polls its verdict every 2 s. The answer with its sources and retrieval (5), the
# verification with its findings, claims (and their passages' articles) and votes (4): none per claim.
MAX_QUERIES = 9


@pytest.mark.parametrize(
    ("url", "headers"),
    [
        ("/answers/{}/", {}),
        ("/answers/{}/verdict/", {"HX-Request": "true"}),
        ("/api/answers/{}/verdict", {}),
    ],
    ids=["answer page", "verdict partial", "verdict api"],
)
def test_the_answer_and_its_verdict_cost_the_same_few_queries_for_3_claims_or_20(
    client, django_assert_max_num_queries, url, headers
):
    queries = {}
    for count in (3, 20):
        verification = verification_with_claims(count)
        # The last claim quotes the answer's last source.
        last = (
            AnswerSource.objects.select_related("passage__article")
            .get(answer=verification.answer, number=count)
            .passage
        )
        with django_assert_max_num_queries(MAX_QUERIES) as captured:
            response = client.get(url.format(verification.answer.public_id), headers=headers)
        queries[count] = len(captured)
        assert response.status_code == 200
        if url.startswith("/api/"):
            claims = response.json()["claims"]
            assert len(claims) == count and claims[-1]["article"] == last.article.slug
            assert [vote["judge"] for vote in claims[-1]["votes"]] == ["local", "claude-test"]
        else:
            html = response.content.decode()
            passage = reverse("dashboard:article", args=[last.article.slug]) + f"#passage-{last.pk}"
            assert html.count('<li id="claim-') == count
            assert f'Source [{count}]: <a href="{passage}">{escape(last.article.title)}</a>' in html
            assert html.count("<td>claude-test</td>") == count
    assert queries[3] == queries[20]


def _not_shared_and_withheld(tmp_path):
    """An answer drawn on an hr note bob is not shared (asked by alice, of hr) and one bob asked himself drawn on
    a public note since made private; and bob."""
    folder = garden_write(
        tmp_path / "garden",
        {
            ".gardenaccess": "hr/: hr\n",
            "hr/Pay bands.md": "The pay review gives band Quillmartin a raise of eleven percent every March.\n",
            "Tides.md": "The Harbourmere tide gauge reads four metres at the spring tide each April.\n",
        },
    )
    members_add("hr", [])
    assert not garden_import([folder]).failures
    alice, bob = (User.objects.create_user(name, password="x") for name in ("alice", "bob"))
    for user in (alice, bob):
        user.groups.add(Group.objects.get(name=READER))
    members_add("hr", ["alice"])
    not_shared = ask("Quillmartin?", alice)
    withheld = ask("Harbourmere?", bob)
    assert not not_shared.refused and not withheld.refused
    Article.objects.filter(slug="tides").update(withheld_at=timezone.now(), withheld_reason="made private")
    return not_shared, withheld, bob


def test_a_verdict_withheld_and_one_not_shared_read_alike_over_the_api_and_mcp(tmp_path):
    """Bob may read neither answer's verdict: one drew on a public note since made private, the other on an hr
    note he is not shared. Both refusals are the same 404 and the same words, so he cannot tell a note of hr
    that went private from one that is still there; an operator is told the first is withheld."""
    not_shared, withheld, bob = _not_shared_and_withheld(tmp_path)
    as_bob = Client()
    as_bob.force_login(bob)
    refusals = [as_bob.get(f"/api/answers/{answer.public_id}/verdict") for answer in (not_shared, withheld)]
    assert [(r.status_code, r.json()) for r in refusals] == [(404, {"error": ANSWER_NOT_SHARED})] * 2

    tools = GardenTools(account_request(bob))
    said = []
    for answer in (not_shared, withheld):
        with pytest.raises(ToolError) as refused:
            tools.verdict(str(answer.public_id))
        said.append(str(refused.value))
    assert said == [ANSWER_NOT_SHARED] * 2

    operator = User.objects.create_user("olga", password="x")
    operator.groups.add(Group.objects.get(name=OPERATOR))
    with pytest.raises(ToolError, match="no longer public"):
        GardenTools(account_request(operator)).verdict(str(withheld.public_id))


def test_an_answer_withheld_and_one_not_shared_read_alike_on_its_page_the_api_and_the_verdict_partial(
    tmp_path,
):
    """The answer's own addresses refuse bob as its verdict's do: the same status and the same words for an
    answer whose note went private as for one drawn on hr's notes, and its conversation shows either turn so."""
    not_shared, withheld, bob = _not_shared_and_withheld(tmp_path)
    as_bob = Client()
    as_bob.force_login(bob)
    for path in ("/answers/{}/", "/answers/{}/verdict/", "/api/answers/{}"):
        refusals = [
            as_bob.get(path.format(answer.public_id), headers={"HX-Request": "true"})
            for answer in (not_shared, withheld)
        ]
        assert [r.status_code for r in refusals] == [404, 404], path
        said = [r.json()["error"] if path.startswith("/api/") else r.content.decode() for r in refusals]
        assert all(escape(ANSWER_NOT_SHARED) in text or text == ANSWER_NOT_SHARED for text in said), path
        assert not any("no longer public" in text for text in said), path
    for answer in (not_shared, withheld):
        conversation = as_bob.get(answer.question.conversation.get_absolute_url()).content.decode()
        assert escape(ANSWER_NOT_SHARED) in conversation and "no longer public" not in conversation
