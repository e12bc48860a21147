"""Follow-ups in a conversation: retrieved with what came before, refused at zero cost when out of scope, each a
turn of its own; with Claude, condensed by a call booked under its own purpose."""

import json
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from garden.answering.asking import REFUSAL_REASON, REFUSAL_TEXT, question_ask
from garden.answering.condensing import SYSTEM_PROMPT as CONDENSE_PROMPT
from garden.answering.followups import NOT_COVERED, Search, Turn, conversation_subject, followup_search
from garden.answering.synthesis.claude import SYSTEM_PROMPT as ANSWER_PROMPT
from garden.audiences import members_add
from garden.management.commands.retrieval_report import NO_SUCH_ACCOUNT
from garden.models import Article, Generator, SearchRule
from tests.fakes import messages_api as fake
from verifier.models import Spend, SpendPurpose

pytestmark = pytest.mark.django_db

TUNNEL = "How long is Cold Knap Tunnel?"


def cited_slugs(answer):
    return {source.passage.article.slug for source in answer.sources.all()}


def test_a_follow_up_with_no_subject_of_its_own_is_searched_for_with_the_conversation(fake_messages_api):
    first = question_ask(text=TUNNEL)
    follow_up = question_ask(text="When was it built?", conversation=first.question.conversation)

    question = follow_up.question
    assert question.conversation == first.question.conversation and question.turn == 2
    assert question.search_rule == SearchRule.CARRIED
    assert question.searched_for == f"{TUNNEL} When was it built?"
    assert "cold-knap-tunnel" in cited_slugs(follow_up)
    assert follow_up.generator == Generator.EXTRACTIVE and "1873" in follow_up.text
    assert fake_messages_api.request_count == 0


def test_a_follow_up_that_names_its_own_subject_changes_the_subject():
    first = question_ask(text="When was the preservation society founded?")
    changed = question_ask(
        text="How much does life membership cost?", conversation=first.question.conversation
    )

    assert changed.question.search_rule == SearchRule.OWN_WORDS and changed.question.searched_for == ""
    assert "membership" in cited_slugs(changed)


@pytest.mark.parametrize(
    "question",
    [
        "And what is the capital of France?",
        "How do I reverse a list in Python?",
        "Who won the 2018 World Cup?",
    ],
)
def test_an_out_of_scope_follow_up_is_refused_at_zero_tokens_as_a_first_question_is(claude, question):
    claude.reply_text("Cold Knap Tunnel is 402 m long [1].")
    first = question_ask(text=TUNNEL)
    asked = claude.request_count

    refused = question_ask(text=question, conversation=first.question.conversation)

    assert refused.refused and refused.text == REFUSAL_TEXT
    assert (refused.input_tokens, refused.output_tokens, refused.cost_usd) == (0, 0, Decimal(0))
    assert claude.request_count == asked  # neither an answer nor a condensing call
    assert not refused.sources.exists()
    reason = refused.question.retrieval.refusal_reason
    assert reason == REFUSAL_REASON or reason.startswith(NOT_COVERED.split("(")[0])


def test_a_carried_follow_up_whose_own_words_the_subject_does_not_hold_is_refused():
    first = question_ask(text=TUNNEL)
    carried = question_ask(text="Who painted it?", conversation=first.question.conversation)
    assert carried.question.search_rule == SearchRule.CARRIED
    assert carried.refused and carried.cost_usd == 0
    assert carried.question.retrieval.refusal_reason == NOT_COVERED.format(words="painted")


def test_a_refused_turn_changes_no_subject():
    turns = [
        Turn(TUNNEL, TUNNEL, SearchRule.OWN_WORDS, refused=False),
        Turn("And the capital of France?", "And the capital of France?", SearchRule.OWN_WORDS, refused=True),
    ]
    assert conversation_subject(turns) == TUNNEL
    assert followup_search("When was it built?", turns).text == f"{TUNNEL} When was it built?"


def test_with_claude_a_follow_up_is_condensed_by_a_call_booked_under_its_own_purpose(claude):
    claude.reply_text("Cold Knap Tunnel is 402 m long [1].")
    first = question_ask(text=TUNNEL)
    claude.enqueue(
        fake.reply_text("When was Cold Knap Tunnel built?", input_tokens=80, output_tokens=9),
        fake.reply_text("It was built between 1873 and 1875 [1].", input_tokens=900, output_tokens=20),
    )

    follow_up = question_ask(text="When was it built?", conversation=first.question.conversation)

    question = follow_up.question
    assert question.search_rule == SearchRule.CONDENSED
    assert question.searched_for == "When was Cold Knap Tunnel built?"
    condensing, answering = claude.requests[-2:]
    assert condensing["body"]["system"] == CONDENSE_PROMPT
    assert TUNNEL in condensing["body"]["messages"][0]["content"]
    assert answering["body"]["system"] == ANSWER_PROMPT
    assert "When was Cold Knap Tunnel built?" in answering["body"]["messages"][0]["content"]
    booked = Spend.objects.get(purpose=SpendPurpose.CONDENSE)
    assert booked.settled and (booked.input_tokens, booked.output_tokens) == (80, 9)
    assert "cold-knap-tunnel" in cited_slugs(follow_up)


def test_when_condensing_fails_the_follow_up_carries_its_subject_offline(claude):
    claude.reply_text("Cold Knap Tunnel is 402 m long [1].")
    first = question_ask(text=TUNNEL)
    failing = fake.status(500, headers={"retry-after": "0"})
    claude.enqueue(failing, failing, failing, fake.reply_text("Built 1873-1875 [1]."))  # retried twice

    follow_up = question_ask(text="When was it built?", conversation=first.question.conversation)

    assert follow_up.question.search_rule == SearchRule.CARRIED
    assert follow_up.text == "Built 1873-1875 [1]." and not follow_up.error
    assert not Spend.objects.filter(purpose=SpendPurpose.CONDENSE, settled=True, cost_usd__gt=0).exists()


def test_a_first_question_searches_its_own_words():
    assert followup_search(TUNNEL, []) == Search(TUNNEL)


CASES = """
- id: t
  turns:
    - {kind: first, question: "How long is Cold Knap Tunnel?", expected_articles: [cold-knap-tunnel]}
    - {kind: pronoun, question: "When was it built?", expected_articles: [cold-knap-tunnel]}
    - {kind: out_of_scope, question: "And what is the capital of France?", category: out_of_scope}
"""


def test_the_report_scores_follow_ups_beside_first_questions(tmp_path, small_golden):
    cases = tmp_path / "conversations.yaml"
    cases.write_text(CASES)
    out = StringIO()
    call_command("retrieval_report", "--golden", str(small_golden), "--conversations", str(cases), stdout=out)
    figures = json.loads(out.getvalue())["conversations"]
    assert figures["follow_ups"] == {
        "in_scope": 1,
        "right_source_in_top_5": 1.0,
        "in_scope_refused": 0.0,
        "out_of_scope": 1,
        "out_of_scope_refused": 1.0,
    }
    assert figures["first_questions"]["in_scope"] == 3 and figures["first_questions"]["out_of_scope"] == 1
    assert figures["missed"] == []


def test_the_reports_ask_as_the_account_they_are_given_and_say_so(tmp_path, small_golden):
    cases = tmp_path / "conversations.yaml"
    cases.write_text(CASES)
    User.objects.create_user("alice")
    members_add("hr", ["alice"])
    Article.objects.filter(slug="cold-knap-tunnel").update(audiences=["hr"])  # the tunnel's note is hr's now

    def report(*extra: str) -> dict[str, Any]:
        out = StringIO()
        call_command(
            "retrieval_report",
            "--golden",
            str(small_golden),
            "--conversations",
            str(cases),
            *extra,
            stdout=out,
        )
        return json.loads(out.getvalue())

    visitor, alice = report(), report("--as", "alice")
    assert visitor["asked_as"] == {"account": None, "audiences": [], "every_audience": False}
    assert alice["asked_as"] == {"account": "alice", "audiences": ["hr"], "every_audience": False}
    assert alice["conversations"]["follow_ups"]["right_source_in_top_5"] == 1.0
    assert visitor["conversations"]["follow_ups"]["right_source_in_top_5"] == 0.0
    assert alice["conversations"]["missed"] == [] and visitor["conversations"]["missed"]

    calibrated = report("--calibrate", "--as", "alice")
    # The golden question about the tunnel finds its note only as alice: the fit is on what she may read.
    assert visitor["configured"]["recall_at_5"] < alice["configured"]["recall_at_5"] == 1.0
    assert calibrated["asked_as"]["account"] == "alice" and calibrated["calibrated"]["recall_at_5"] == 1.0
    with pytest.raises(CommandError) as raised:
        report("--calibrate", "--as", "nobody")
    assert str(raised.value) == NO_SUCH_ACCOUNT.format(username="nobody")
