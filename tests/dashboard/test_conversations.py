"""Conversations on every face: the API's `conversation`, the conversation page and its follow-up box, the home
page's list, the logs page, `ask --conversation`; someone else's conversation is not found; each turn is checked
on its own sources, and the conversation shows its worst label."""

import html
import json
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client

from claimcheck.terms import ClaimStatus, RiskLabel
from dashboard.conversations import CONVERSATION_NOT_FOUND
from garden.answering.asking import CONVERSATION_FULL
from garden.audiences import members_add
from garden.models import Answer, Article, Conversation, Question, SearchRule
from garden.selectors import ANSWER_NOT_SHARED
from tests.factories import login
from verifier.models import Verification, VerificationStatus
from verifier.queueing import verification_create
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

TUNNEL = "How long is Cold Knap Tunnel?"
BUILT = "When was it built?"
FRANCE = "And what is the capital of France?"


def reader(name: str) -> Client:
    client = Client()
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name="reader"))
    client.force_login(user)
    return client


def conversation_of(answer: Answer) -> Conversation:
    assert answer.question.conversation is not None
    return answer.question.conversation


def api_ask(client: Client, question: str, conversation: str | None = None):
    body = {"question": question} | ({"conversation": conversation} if conversation else {})
    return client.post("/api/ask", body, content_type="application/json")


def test_the_api_returns_the_conversation_and_a_follow_up_continues_it():
    me = reader("me")
    first = api_ask(me, TUNNEL).json()
    assert first["turn"] == 1 and first["searched_for"] is None
    conversation = Conversation.objects.get(public_id=first["conversation"])

    follow_up = api_ask(me, BUILT, first["conversation"]).json()

    assert follow_up["conversation"] == first["conversation"] and follow_up["turn"] == 2
    assert follow_up["searched_for"] == f"{TUNNEL} {BUILT}"
    assert "cold-knap-tunnel" in {source["article"] for source in follow_up["sources"]}
    assert conversation.questions.count() == 2


def test_a_conversation_holds_a_bounded_number_of_turns_and_says_so(settings):
    settings.CONVERSATION_MAX_TURNS = 2
    me = reader("me")
    first = api_ask(me, TUNNEL).json()
    assert api_ask(me, BUILT, first["conversation"]).json()["turn"] == 2
    full = CONVERSATION_FULL.format(limit=2)
    third = api_ask(me, "How wide is it?", first["conversation"])
    assert third.status_code == 400 and third.json() == {"error": full}
    page = me.post("/", {"question": "How wide is it?", "conversation": first["conversation"]})
    assert page.status_code == 422 and full in html.unescape(page.content.decode())
    assert Question.objects.filter(conversation__public_id=first["conversation"]).count() == 2
    assert api_ask(me, "How wide is it?").json()["turn"] == 1  # a new conversation takes it


def test_a_long_conversation_is_paged_with_the_box_on_its_last_page(settings):
    settings.CONVERSATION_TURNS_PER_PAGE = 2
    me = reader("me")
    first = api_ask(me, TUNNEL).json()
    follow_ups = (BUILT, "Why was it relined?", "What about the bats?", "How wide is it?")
    asked = [api_ask(me, question, first["conversation"]).json() for question in follow_ups]
    third = asked[1]
    assert [turn["turn"] for turn in asked] == [2, 3, 4, 5]
    url = Conversation.objects.get(public_id=first["conversation"]).get_absolute_url()

    def turns_on(page: str) -> list[str]:
        return [f"turn-{n}" for n in range(1, 6) if f'id="turn-{n}"' in page]

    last = me.get(url).content.decode()  # the newest turns, with the box to ask the next
    assert turns_on(last) == ["turn-5"] and "Ask a follow-up" in last
    assert f'href="{url}?page=2" rel="prev"' in last and "Page 3 of 3" in last
    earlier = me.get(f"{url}?page=1").content.decode()
    assert turns_on(earlier) == ["turn-1", "turn-2"] and "Ask a follow-up" not in earlier
    answer_url = f"/answers/{third['answer_id']}/"
    opened = me.get(answer_url).content.decode()  # the turns up to the answer opened, it on the last page
    assert turns_on(opened) == ["turn-3"] and "the answer you opened" in opened
    assert f'href="{answer_url}?page=1" rel="prev"' in opened and "Page 2 of 2" in opened
    assert turns_on(me.get(f"{answer_url}?page=1").content.decode()) == ["turn-1", "turn-2"]


def test_an_answer_s_address_shows_its_conversation_up_to_it_and_no_later_turn():
    """Alice gives bob the address of her second answer: he reads turns 1 and 2, and nothing of turn 3 (its
    question, its answer, its label), nor the conversation's id or address, which would show it; the API's
    answer gives him no conversation either. Alice, its owner, still has the conversation's link."""
    alice, bob = reader("alice"), reader("bob")
    first = api_ask(alice, TUNNEL).json()
    second = api_ask(alice, BUILT, first["conversation"]).json()
    later = "Why was Cold Knap Tunnel relined?"
    third = api_ask(alice, later, first["conversation"]).json()
    assert third["turn"] == 3

    page = bob.get(f"/answers/{second['answer_id']}/").content.decode()
    assert 'id="turn-1"' in page and 'id="turn-2"' in page and 'id="turn-3"' not in page
    assert later not in html.unescape(page) and third["answer_id"] not in page
    assert first["conversation"] not in page and "Ask a follow-up" not in page
    verdict = bob.get(f"/answers/{second['answer_id']}/verdict/", headers={"HX-Request": "true"})
    assert first["conversation"] not in verdict.content.decode()
    assert bob.get(f"/api/answers/{second['answer_id']}").json()["conversation"] is None

    own = alice.get(f"/answers/{second['answer_id']}/").content.decode()
    assert f'href="/conversations/{first["conversation"]}/"' in own and 'id="turn-3"' not in own
    assert "Ask a follow-up" not in own  # a next turn goes below turn 3, which this page does not show
    assert alice.get(f"/api/answers/{second['answer_id']}").json()["conversation"] == first["conversation"]


def test_an_out_of_scope_follow_up_through_the_api_is_refused_at_no_cost():
    me = reader("me")
    first = api_ask(me, TUNNEL).json()
    refused = api_ask(me, FRANCE, first["conversation"]).json()
    assert refused["refused"] and refused["turn"] == 2 and refused["citations"] == []
    assert refused["usage"]["input_tokens"] == 0 and refused["usage"]["cost_usd"] == "0.000000"


@pytest.mark.parametrize("whose", ["someone else's", "unknown", "malformed"])
def test_asking_in_a_conversation_one_does_not_own_is_not_found_and_stores_nothing(whose):
    theirs = api_ask(reader("someone"), TUNNEL).json()["conversation"]
    conversation_id = {
        "someone else's": theirs,
        "unknown": "00000000-0000-4000-8000-000000000000",
        "malformed": "1",
    }[whose]
    me = reader("me")

    response = api_ask(me, BUILT, conversation_id)

    assert response.status_code == 404 and response.json() == {"error": CONVERSATION_NOT_FOUND}
    assert not Question.objects.filter(text=BUILT).exists()
    page = me.post("/", {"question": BUILT, "conversation": conversation_id})
    assert page.status_code == 404 and not Question.objects.filter(text=BUILT).exists()


def test_an_anonymous_visitor_continues_only_this_sessions_conversations(settings):
    settings.ANONYMOUS_CAN_ASK = True
    mine, other = Client(), Client()
    mine.post("/", {"question": TUNNEL})
    conversation = Conversation.objects.get()

    assert other.post("/", {"question": BUILT, "conversation": conversation.public_id}).status_code == 404
    followed = mine.post("/", {"question": BUILT, "conversation": conversation.public_id})

    answer = Answer.objects.get(question__text=BUILT)
    assert followed.status_code == 302 and followed["Location"] == answer.get_absolute_url()
    assert answer.question.conversation == conversation and answer.question.turn == 2


def test_the_openapi_schema_describes_the_conversation():
    schema = Client().get("/api/openapi.json").json()["components"]["schemas"]
    assert "conversation" in schema["AskIn"]["properties"]
    assert "conversation" not in schema["AskIn"].get("required", [])
    for field in ("conversation", "turn", "searched_for"):
        assert schema["AnswerOut"]["properties"][field]["description"], field


def test_the_conversation_page_shows_the_turns_in_order_with_what_a_follow_up_searched_for():
    me = reader("me")
    me.post("/", {"question": TUNNEL})
    me.post("/", {"question": BUILT, "conversation": Conversation.objects.get().public_id})
    first, second = Answer.objects.order_by("question__turn")

    page = me.get(second.get_absolute_url()).content.decode()

    assert page.index(TUNNEL) < page.index(BUILT)
    assert f'id="answer-{first.public_id}"' in page and f'id="answer-{second.public_id}"' in page
    assert 'class="turn highlighted"' in page and page.count('aria-current="true"') == 1
    assert page.count("the answer you opened") == 1  # said in words, not by colour alone
    assert page.index('aria-current="true"') > page.index(f'id="answer-{first.public_id}"')
    assert "Searched for:" in page and f"{TUNNEL} {BUILT}" in page
    assert f'hx-get="/answers/{second.public_id}/verdict/"' in page  # each verdict fills in live
    assert 'name="conversation"' in page  # the box to ask the next
    conversation_page = me.get(conversation_of(first).get_absolute_url()).content.decode()
    assert BUILT in conversation_page and 'aria-current="true"' not in conversation_page


def test_someone_else_reads_a_shared_conversation_but_gets_no_box_to_ask_in_it():
    me = reader("me")
    me.post("/", {"question": TUNNEL})
    answer = Answer.objects.get()
    page = reader("someone").get(answer.get_absolute_url()).content.decode()
    assert TUNNEL in page and 'name="conversation"' not in page


def test_a_follow_up_asked_with_htmx_is_added_under_the_turns_before_it():
    me = reader("me")
    me.post("/", {"question": TUNNEL})
    conversation = Conversation.objects.get()

    response = me.post(
        "/", {"question": BUILT, "conversation": conversation.public_id}, headers={"HX-Request": "true"}
    )

    html = response.content.decode()
    answer = Answer.objects.get(question__text=BUILT)
    assert response.status_code == 200 and response["HX-Push-Url"] == answer.get_absolute_url()
    assert 'id="turn-2"' in html and f'id="answer-{answer.public_id}"' in html and "<html" not in html
    assert TUNNEL not in html.replace(f"{TUNNEL} {BUILT}", "")  # only the new turn, not the whole thread
    assert f'id="follow-up-{conversation.public_id}"' in html
    assert html.count('hx-swap-oob="true"') == 2  # a fresh box and the label; the turn's answer stays in it


def test_the_home_page_lists_the_readers_conversations_with_their_turns():
    me = reader("me")
    me.post("/", {"question": TUNNEL})
    conversation = Conversation.objects.get()
    me.post("/", {"question": BUILT, "conversation": conversation.public_id})
    reader("someone").post("/", {"question": "Who built River Kest?"})

    home = me.get("/").content.decode()
    assert "Your conversations" in home and conversation.get_absolute_url() in home and "2 turns" in home
    assert "River Kest" not in home


def test_operators_see_every_conversation_on_the_logs_page(client):
    me = reader("me")
    me.post("/", {"question": TUNNEL})
    me.post("/", {"question": BUILT, "conversation": Conversation.objects.get().public_id})
    reader("someone").post("/", {"question": "Who built River Kest?"})
    login(client, "operator")
    logs = client.get("/operators/logs/").content.decode()
    for conversation in Conversation.objects.all():
        assert conversation.get_absolute_url() in logs
    assert "turn 2 of its conversation" in logs


def test_ask_command_prints_the_conversation_and_continues_it():
    out = StringIO()
    call_command("ask", TUNNEL, "--json", stdout=out)
    first = json.loads(out.getvalue())
    out = StringIO()
    call_command("ask", BUILT, "--json", "--conversation", first["conversation"], stdout=out)
    follow_up = json.loads(out.getvalue())
    assert follow_up["conversation"] == first["conversation"] and follow_up["turn"] == 2
    assert follow_up["searched_for"] == f"{TUNNEL} {BUILT}"
    out = StringIO()
    call_command("ask", FRANCE, "--conversation", first["conversation"], stdout=out)
    assert (
        "RETRIEVAL REFUSED" in out.getvalue()
        and f"conversation: {first['conversation']} (turn 3)" in out.getvalue()
    )
    with pytest.raises(CommandError, match="No conversation of yours has this id"):
        call_command("ask", BUILT, "--conversation", "00000000-0000-4000-8000-000000000000")


def test_a_claim_repeated_from_an_earlier_turn_is_judged_again_on_this_turns_sources(settings):
    settings.VERIFIER_MODE = "local"
    me = reader("me")
    first = Answer.objects.get(public_id=api_ask(me, TUNNEL).json()["answer_id"])
    second_id = api_ask(me, "How much does life membership cost?", str(conversation_of(first).public_id))
    second = Answer.objects.get(public_id=second_id.json()["answer_id"])
    assert second.question.search_rule == SearchRule.OWN_WORDS
    repeated = first.text  # turn 1's own answer, quoted verbatim from the tunnel's passages it cites
    assert not any("402 m" in source.passage.text for source in second.sources.all())
    for answer in (first, second):
        answer.text = repeated
        answer.save(update_fields=["text"])
        Verification.objects.filter(answer=answer).delete()
        created = verification_create(answer=answer)
        assert created is not None
        verification_run(verification_id=created.pk)

    def statuses(answer):
        return [c.status for c in Verification.objects.get(answer=answer).claims.all() if c.is_claim]

    # Supported by the tunnel's passages turn 1 cited; turn 2 cited only membership passages: not trusted there.
    assert ClaimStatus.VERIFIED in statuses(first)
    assert statuses(second) and ClaimStatus.VERIFIED not in statuses(second)


def test_the_conversation_shows_its_worst_label_at_the_top():
    me = reader("me")
    first = Answer.objects.get(public_id=api_ask(me, TUNNEL).json()["answer_id"])
    conversation_id = str(conversation_of(first).public_id)
    second = Answer.objects.get(public_id=api_ask(me, BUILT, conversation_id).json()["answer_id"])
    url = conversation_of(first).get_absolute_url()
    assert "no turn checked yet" in me.get(url).content.decode()

    Verification.objects.filter(answer=first).update(
        status=VerificationStatus.DONE, risk_label=RiskLabel.GROUNDED
    )
    page = me.get(url).content.decode()
    assert "worst check so far" in page and "1 still being checked" in page
    Verification.objects.filter(answer=second).update(
        status=VerificationStatus.DONE, risk_label=RiskLabel.HALLUCINATING
    )
    header = page_header(me.get(url).content.decode())
    assert RiskLabel.HALLUCINATING.value in header and RiskLabel.HALLUCINATING.text in header
    assert "risk-label-hallucinating" in header and "still being checked" not in header
    polled = me.get(f"/answers/{second.public_id}/verdict/", headers={"HX-Request": "true"}).content.decode()
    assert 'id="conversation-label-' in polled and RiskLabel.HALLUCINATING.value in page_header(polled)


def test_a_turn_hidden_from_the_reader_counts_nowhere_in_the_worst_label():
    me = reader("me")
    members_add("hr", ["me"])
    first = Answer.objects.get(public_id=api_ask(me, TUNNEL).json()["answer_id"])
    conversation_id = str(conversation_of(first).public_id)
    second_id = api_ask(me, "How much does life membership cost?", conversation_id).json()["answer_id"]
    second = Answer.objects.get(public_id=second_id)
    tunnel = {source.passage.article_id for source in first.sources.all()}
    assert tunnel.isdisjoint(source.passage.article_id for source in second.sources.all())
    Article.objects.filter(pk__in=tunnel).update(audiences=["hr"])  # turn 1 now drew on hr's notes only
    Verification.objects.filter(answer=first).update(
        status=VerificationStatus.DONE, risk_label=RiskLabel.HALLUCINATING
    )
    Verification.objects.filter(answer=second).update(status=VerificationStatus.RUNNING)
    url = conversation_of(first).get_absolute_url()
    other = reader("other")  # in no audience: the link is all they have

    assert RiskLabel.HALLUCINATING.value in page_header(me.get(url).content.decode())
    theirs = other.get(url).content.decode()
    # The second turn's words, up to its first citation (a link on the page).
    assert ANSWER_NOT_SHARED in theirs and second.text.split(" [", 1)[0] in html.unescape(theirs)
    assert "no turn checked yet" in page_header(theirs) and "1 still being checked" in page_header(theirs)
    Verification.objects.filter(answer=second).update(
        status=VerificationStatus.DONE, risk_label=RiskLabel.GROUNDED
    )
    header = page_header(other.get(url).content.decode())
    assert RiskLabel.GROUNDED.value in header and RiskLabel.HALLUCINATING.value not in header
    polled = other.get(
        f"/answers/{second.public_id}/verdict/", headers={"HX-Request": "true"}
    ).content.decode()
    assert RiskLabel.GROUNDED.value in page_header(polled)
    assert RiskLabel.HALLUCINATING.value not in page_header(polled)
    assert RiskLabel.HALLUCINATING.value in page_header(me.get(url).content.decode())


def page_header(html: str) -> str:
    start = html.index('id="conversation-label-')
    return html[start : html.index("</header>", start)]


def test_a_conversation_page_of_four_turns_stays_within_its_query_budget(django_assert_max_num_queries):
    me = reader("me")
    first = api_ask(me, TUNNEL).json()
    for question in (BUILT, "Why was it relined?", "What about the bats?"):
        api_ask(me, question, first["conversation"])
    url = Conversation.objects.get(public_id=first["conversation"]).get_absolute_url()
    with django_assert_max_num_queries(80):
        assert me.get(url).status_code == 200


def test_searched_for_never_repeats_a_turn_the_reader_may_not_see():
    """Turn 2 was searched for with turn 1's words (a follow-up carried its subject); turn 1 then drew on hr's
    notes only. A reader outside hr given the conversation sees turn 2, but not what it was searched for; a
    reader in hr still does."""
    me = reader("me")
    members_add("hr", ["me"])
    first = Answer.objects.get(public_id=api_ask(me, TUNNEL).json()["answer_id"])
    conversation_id = str(conversation_of(first).public_id)
    membership = "How much does life membership cost?"
    second = Answer.objects.get(public_id=api_ask(me, membership, conversation_id).json()["answer_id"])
    tunnel = {source.passage.article_id for source in first.sources.all()}
    assert tunnel.isdisjoint(source.passage.article_id for source in second.sources.all())
    Question.objects.filter(answer=second).update(
        searched_for=f"{TUNNEL} {membership}", search_rule=SearchRule.CARRIED
    )
    Article.objects.filter(pk__in=tunnel).update(audiences=["hr"])  # turn 1 now drew on hr's notes only
    url = conversation_of(first).get_absolute_url()
    other = reader("other")  # in no audience: the link is all they have

    theirs = html.unescape(other.get(url).content.decode())
    assert ANSWER_NOT_SHARED in theirs and membership in theirs
    assert "Searched for" not in theirs and "Cold Knap" not in theirs
    assert other.get(f"/api/answers/{second.public_id}").json()["searched_for"] is None
    mine = html.unescape(me.get(url).content.decode())
    assert f"Searched for: <q>{TUNNEL} {membership}</q>" in mine
    assert me.get(f"/api/answers/{second.public_id}").json()["searched_for"] == f"{TUNNEL} {membership}"


def test_a_verdict_polled_on_an_answer_s_page_labels_the_turns_up_to_that_answer():
    """Turn 1's verdict, polled on the page of turn 2, swaps in the label of turns 1 and 2 (mixed), never turn
    3's (hallucinating), for the owner and for a reader given the link; on the conversation's page, the whole."""
    alice, bob = reader("alice"), reader("bob")
    first = api_ask(alice, TUNNEL).json()
    second = api_ask(alice, BUILT, first["conversation"]).json()
    third = api_ask(alice, TUNNEL, first["conversation"]).json()
    for asked, label in [
        (first, RiskLabel.GROUNDED),
        (second, RiskLabel.MIXED),
        (third, RiskLabel.HALLUCINATING),
    ]:
        Verification.objects.filter(answer__public_id=asked["answer_id"]).update(
            status=VerificationStatus.DONE, risk_label=label
        )

    def polled(viewer: Client, on: str) -> str:
        headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{on}"}
        return page_header(
            viewer.get(f"/answers/{first['answer_id']}/verdict/", headers=headers).content.decode()
        )

    for viewer in (alice, bob):
        header = polled(viewer, f"/answers/{second['answer_id']}/")
        assert RiskLabel.MIXED.text in header and RiskLabel.HALLUCINATING.text not in header
    assert Verification.objects.filter(risk_label=RiskLabel.HALLUCINATING).count() == 1
    assert RiskLabel.HALLUCINATING.text in polled(alice, f"/conversations/{first['conversation']}/")
