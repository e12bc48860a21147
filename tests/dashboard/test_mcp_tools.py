"""The MCP tools in this process, for what needs settings a server in another process cannot be given: a call
over HTTP counts against its token's rate limit, as the same call to the API does, and one on stdio against its
user's and its machine's; a token does only what its scopes allow."""

import pytest
from django.contrib.auth.models import AnonymousUser, Group, User
from django.test import RequestFactory
from mcp.server.mcpserver.exceptions import ToolError

from dashboard.actions.callers import account_request
from dashboard.bearer import TOKEN_SCOPE_MISSING, bearer_authenticate
from dashboard.conversations import CONVERSATION_NOT_FOUND
from dashboard.mcp_server import TOO_MANY_CALLS, GardenTools
from dashboard.ratelimit import RATE_LIMITED
from garden.models import Question
from tests.conftest import SAMPLE_FOLDERS
from verifier.roles import READER
from verifier.scopes import TokenScope
from verifier.tokens import token_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counts")]

CHECKED = "Cold Knap Tunnel is 402 m long."


def tools_for_token(name: str, scopes: list[TokenScope] | None = None) -> GardenTools:
    """The tools as they run for an HTTP request with a new token of a new reader (from one address), made for
    `scopes` (all of them unless given)."""
    user = User.objects.create_user(name, password="x")
    user.groups.add(Group.objects.get(name=READER))
    raw = token_create(user_id=user.pk, name="agent", scopes=scopes or list(TokenScope))[1]
    request = RequestFactory().post("/mcp", headers={"Authorization": f"Bearer {raw}"})
    assert bearer_authenticate(request) is not None
    return GardenTools(request)


def test_an_agent_s_calls_are_limited_per_token_as_the_api_s_are(settings):
    settings.RATE_LIMIT_PER_TOKEN = 2
    settings.RATE_LIMIT_PER_IP = 1
    first, neighbour = tools_for_token("agent-one"), tools_for_token("agent-two")
    for _ in range(2):  # past the address's limit of one: a token counts on its own
        assert first.check(CHECKED)["claims"]
    with pytest.raises(ToolError) as over:
        first.check(CHECKED)
    message = str(over.value)
    waited = TOO_MANY_CALLS.split("{seconds}")[0].format(tool="check")  # then the seconds to wait
    assert message.startswith(RATE_LIMITED) and message.startswith(waited)
    assert neighbour.check(CHECKED)["claims"]  # another token, the same address


def test_a_read_only_token_searches_but_may_not_ask_or_check_naming_the_scope(sample_garden):
    reading = tools_for_token("agent-reading", [TokenScope.READ])
    assert reading.search("Cold Knap Tunnel")["found"]
    assert reading.read_article(title="Cold Knap Tunnel")["text"]
    with pytest.raises(ToolError) as asking:
        reading.ask("How long is Cold Knap Tunnel?")
    assert str(asking.value) == TOKEN_SCOPE_MISSING.format(scope="ask", scopes="`read`")
    with pytest.raises(ToolError) as checking:
        reading.check(CHECKED)
    assert "`check` scope" in str(checking.value)
    asking_only = tools_for_token("agent-asking", [TokenScope.ASK])
    with pytest.raises(ToolError) as searching:
        asking_only.search("Cold Knap Tunnel")
    assert "`read` scope" in str(searching.value)
    assert not Question.objects.exists()  # nothing was asked


def test_an_agent_on_stdio_is_limited_per_user_as_over_http(settings):
    settings.RATE_LIMIT_PER_USER = 2
    settings.RATE_LIMIT_PER_IP = 100
    user = User.objects.create_user("stdio-agent", password="x")
    user.groups.add(Group.objects.get(name=READER))
    tools = GardenTools(account_request(user))  # as `manage.py mcp --as stdio-agent` runs them
    for _ in range(2):
        assert tools.check(CHECKED)["claims"]
    with pytest.raises(ToolError) as over:
        tools.check(CHECKED)
    assert str(over.value).startswith(TOO_MANY_CALLS.split("{seconds}")[0].format(tool="check"))
    asked = Question.objects.count()
    with pytest.raises(ToolError):  # each tool counts apart, as the API's do
        for _ in range(3):
            tools.ask("How long is Cold Knap Tunnel?")
    assert Question.objects.count() == asked + 2  # the third was refused before anything was asked


def test_a_visitor_s_agent_on_stdio_is_limited_by_its_machine_s_address(settings):
    settings.ANONYMOUS_CAN_CHECK = True
    settings.RATE_LIMIT_PER_IP = 1
    tools = GardenTools(account_request(AnonymousUser()))  # `manage.py mcp` with no --as
    assert tools.check(CHECKED)["claims"]
    with pytest.raises(ToolError) as over:
        GardenTools(account_request(AnonymousUser())).check(CHECKED)  # another server on the same machine
    assert str(over.value).startswith(RATE_LIMITED)


def test_an_agent_asks_a_follow_up_in_its_own_conversation_and_never_in_another_s(sample_garden):
    agent = User.objects.create_user("follow-up-agent", password="x")
    agent.groups.add(Group.objects.get(name=READER))
    tools = GardenTools(account_request(agent))
    first = tools.ask("How long is Cold Knap Tunnel?")
    follow_up = tools.ask("When was it built?", first["conversation"])
    assert follow_up["conversation"] == first["conversation"] and follow_up["turn"] == 2
    assert "Cold Knap Tunnel" in follow_up["searched_for"]  # searched with what came before
    assert tools.ask("When was it built?")["conversation"] != first["conversation"]  # none given: a new one

    other = User.objects.create_user("other-agent", password="x")
    other.groups.add(Group.objects.get(name=READER))
    with pytest.raises(ToolError) as refused:
        GardenTools(account_request(other)).ask("And how wide is it?", first["conversation"])
    assert str(refused.value) == CONVERSATION_NOT_FOUND
    with pytest.raises(ToolError):
        tools.ask("And how wide is it?", "not-a-conversation")


def test_an_agent_s_check_tells_nothing_of_a_garden_named_as_the_source_tree(settings, sample_garden):
    # CRITIC_SOURCE_TREE set to the imported sample garden: refused, so a right guess at a note's third line
    # (`topics: [history]`) and the same guess at a note that is not there come back alike, unread.
    settings.CRITIC_SOURCE_TREE = str(SAMPLE_FOLDERS[1])
    tools = tools_for_token("tree-prober")
    right = tools.check(f"{CHECKED} See `kvr-history.md:3 - topics history`.")["path_citations"]
    wrong = tools.check(f"{CHECKED} See `kvr-historie.md:3 - topics history`.")["path_citations"]
    assert [(item["status"], item["reason"]) for item in right] == [("dropped", "no-source-tree")]
    assert [{**item, "reference": "", "end": 0} for item in right] == [
        {**item, "reference": "", "end": 0} for item in wrong
    ]
