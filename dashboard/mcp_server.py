"""The MCP server: the garden's tools for an agent (Claude Code, Claude Desktop), acting as one user.

`python manage.py mcp [--as USERNAME]` runs it over stdio, as one user; `--http` serves it over streamable HTTP,
each request acting as the user of its personal token (`dashboard.mcp_http`). Each tool parses its input, calls
the action the pages and the API call (`dashboard.actions`: the same permissions, rate limits, Claude ledger and
visibility rule, over HTTP and stdio alike) and shapes its result. The tools are plain functions: the SDK runs
each on a worker thread, where the ORM may be called as in a request.

A failure the agent can act on (not allowed, too long, not found, Claude busy) is a tool error with its message;
a refusal is an answer, as on the page: `refused` is true and no model was called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import close_old_connections
from django.http import HttpRequest
from django.urls import Resolver404, resolve
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import Field

from dashboard.actions.answers import verdict_read
from dashboard.actions.asking import answer_ask
from dashboard.actions.callers import admit
from dashboard.actions.checking import text_check
from dashboard.actions.reading import article_read, passages_search
from dashboard.actions.refusals import Outcome, Refused
from dashboard.permissions import may_see_rejected_quotes, request_reader
from dashboard.presenters import check_sources, checked_payload
from dashboard.ratelimit import RATE_LIMITED
from dashboard.shapes import shape_json
from dashboard.shapes.answers import answer_shape
from dashboard.shapes.verdicts import verdict_shape
from garden import selectors
from garden.models import Answer, Passage
from garden.readers import Reader
from verifier.checking import SOURCES_MAX, path_citations_audit
from verifier.scopes import TokenScope

ASK_NOT_ALLOWED = (
    "Asking is for readers on this site (ANONYMOUS_CAN_ASK is off): run the MCP server as a reader, "
    "`python manage.py mcp --as USERNAME`."
)
CHECK_NOT_ALLOWED = (
    "Fact-checking is for readers (ANONYMOUS_CAN_CHECK is off): run the MCP server as a reader, "
    "`python manage.py mcp --as USERNAME`."
)
ROLE_NOT_ALLOWED = (
    "The user {username!r} may not {what}: that is for readers (and above); give them the reader role."
)
ARTICLE_NOT_FOUND = (
    "No article the garden shows has this {by}: {value!r}. `search` finds articles by their text."
)
ARTICLE_WHICH = "Give the article's `title` or its `address` (as `search` returns it)."
ANSWER_NOT_FOUND = "No answer with this id: give the `answer_id` that `ask` returned."
VERDICT_WAIT = (
    "The verdict is being checked (a worker judges each claim, usually within a minute): call `verdict` with "
    "answer_id {answer_id!r} until its status is done."
)
NOTHING_TO_CHECK = "Nothing to check: the answer is a refusal, an abstention or has no claims."
TOO_MANY_CALLS = RATE_LIMITED + " (Call `{tool}` again in {seconds} s.)"
# What a tool's caller without the role is told: to a visitor (the server run with no account), and the act.
NOT_ALLOWED = {
    "ask": (ASK_NOT_ALLOWED, "ask"),
    "verdict": (ASK_NOT_ALLOWED, "ask"),
    "check": (CHECK_NOT_ALLOWED, "check text"),
}

INSTRUCTIONS = (
    "Groundwork answers only from its garden of notes and checks each claim of an answer against them. "
    "`search` finds passages, `read_article` reads an article, `ask` answers a question with numbered sources "
    "(or refuses at no cost when the garden has nothing on it) and `verdict` gives its claim-by-claim verification; "
    "`check` fact-checks a text you wrote, claim by claim. Addresses are the site's pages."
)

Tool = TypeVar("Tool", bound=Callable[..., Any])
# The request a tool call acts for: its user (and, over HTTP, the token it came with and the client's address).
Caller = Callable[[], HttpRequest]


def site_address(path: str) -> str:
    """A page's address: under SITE_URL when the setting gives one, else its path."""
    return f"{settings.SITE_URL}{path}"


def _django_call(tool: Tool) -> Tool:
    """Around each call, what Django does around a request: a connection that broke or outlived CONN_MAX_AGE is
    closed, and opened again when next needed."""

    @wraps(tool)
    def called(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return tool(*args, **kwargs)
        finally:
            close_old_connections()

    return called  # type: ignore[return-value]


class GardenTools:
    """The tools, for one request's user (anonymous: a visitor, with the anonymous settings)."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request

    @property
    def user(self) -> User | AnonymousUser:
        return self.request.user

    @property
    def reader(self) -> Reader:
        """What the tools' user may read of the garden (a token sees what its owner sees)."""
        return request_reader(self.request)

    def search(self, query: str) -> dict[str, Any]:
        with self._refusals("search"):
            query, found = passages_search(self.request, query)
        passages = [_passage(hit.passage, hit.text, hit.score) for hit in found]
        return {"query": query, "found": bool(passages), "passages": passages}

    def read_article(self, title: str = "", address: str = "") -> dict[str, Any]:
        if address.strip():
            by, value, slug = "address", address, _address_slug(address.strip()) or ""
        elif title.strip():
            by, value, slug = "title", title, ""
        else:
            self.within_scope(TokenScope.READ)
            raise ToolError(ARTICLE_WHICH)
        with self._refusals("read_article", not_found=ARTICLE_NOT_FOUND.format(by=by, value=value)):
            article, revision = article_read(
                self.request, slug=slug, title=title.strip() if by == "title" else ""
            )
        return {
            "title": article.title,
            "address": site_address(article.get_absolute_url()),
            "updated": revision.date.isoformat() if revision.date else None,
            "text": selectors.revision_text_shown(revision, self.reader),
        }

    def article_text(self, slug: str) -> str:
        """The article's current text at `slug` as the reader's page shows it (the `article` resource)."""
        try:
            _, revision = article_read(self.request, slug=slug)
        except Refused as refused:
            if refused.outcome is Outcome.NOT_FOUND:
                raise ResourceNotFoundError(ARTICLE_NOT_FOUND.format(by="slug", value=slug)) from None
            raise ResourceError(refused.message) from None
        return selectors.revision_text_shown(revision, self.reader)

    def ask(self, question: str, conversation: str | None = None) -> dict[str, Any]:
        # An agent continues its own account's conversations; a visitor has no session here to own one by.
        with self._refusals("ask"):
            answer = answer_ask(self.request, question, conversation)
        payload = shape_json(answer_shape(answer, reader=self.reader))
        payload["verdict"] = self._verdict_or_wait(answer)
        return payload

    def verdict(self, answer_id: str) -> dict[str, Any]:
        with self._refusals("verdict", not_found=ANSWER_NOT_FOUND):
            answer = verdict_read(self.request, answer_id)
        return self._verdict_or_wait(answer)

    def check(self, text: str, sources: list[str] | None = None) -> dict[str, Any]:
        with self._refusals("check"):
            done = text_check(self.request, text, sources)
        if done.passages is None:
            given: list[dict[str, Any]] = [
                {"number": n, "given": True} for n in range(1, len(sources or []) + 1)
            ]
        else:
            given = check_sources(done.passages)
        payload = checked_payload(done.checked, given, rejected_quotes=may_see_rejected_quotes(self.request))
        for source in payload["sources"]:
            if "url" in source:
                source["url"] = site_address(source["url"])
        for claim in payload["claims"]:  # beside its source's number, where an agent reads it
            number = claim["source_index"]
            cited = payload["sources"][number - 1] if number and number <= len(payload["sources"]) else {}
            claim["source_address"] = cited.get("url")
        payload["path_citations"] = path_citations_audit(text)
        return payload

    @contextmanager
    def _refusals(self, tool: str, *, not_found: str = "") -> Iterator[None]:
        """An action refused, as a tool error: a visitor refused for want of a role is told to run the server as
        a reader, a user that the role is missing; a call over the rate limit, when to call again."""
        try:
            yield
        except Refused as refused:
            if refused.outcome is Outcome.FORBIDDEN and refused.role_missing:
                message = self._not_allowed(*NOT_ALLOWED[tool])
            elif refused.outcome is Outcome.LIMITED:
                message = TOO_MANY_CALLS.format(tool=tool, seconds=refused.retry_after)
            elif refused.outcome is Outcome.NOT_FOUND and not_found:
                message = not_found
            else:
                message = refused.message
            raise ToolError(message) from None

    def within_scope(self, scope: TokenScope) -> None:
        """Refuse a call over HTTP whose token was not made for `scope` (over stdio there is no token)."""
        try:
            admit(self.request, scope)
        except Refused as refused:
            raise ToolError(refused.message) from None

    def _not_allowed(self, visitor_message: str, what: str) -> str:
        """Why the user may not: a visitor is told to run the server as a reader; a user, that the role is missing."""
        if self.user.is_authenticated:
            return ROLE_NOT_ALLOWED.format(username=self.user.get_username(), what=what)
        return visitor_message

    def _verdict_or_wait(self, answer: Answer) -> dict[str, Any]:
        shape = verdict_shape(
            answer,
            reader=self.reader,
            rejected_quotes=may_see_rejected_quotes(self.request),
        )
        verdict = shape_json(shape)
        if shape.status is None:
            verdict["wait"] = NOTHING_TO_CHECK
        elif not shape.finished:
            verdict["wait"] = VERDICT_WAIT.format(answer_id=str(answer.public_id))
        return verdict


def _passage(passage: Passage, text: str, score: float) -> dict[str, Any]:
    return {
        "title": passage.article.title,
        "cited_as": passage.cited_as,
        "address": site_address(passage.article.get_absolute_url()),
        "passage_address": site_address(passage.get_absolute_url()),
        "page": passage.page,
        "score": round(score, 4),
        "text": text,
    }


def _address_slug(given: str) -> str | None:
    """The slug of the article page an address names (with or without SITE_URL, a revision or an anchor)."""
    path = urlsplit(given).path or "/"
    try:
        match = resolve(path if path.endswith("/") else f"{path}/")
    except Resolver404:
        return None
    return match.kwargs.get("slug") if match.view_name == "dashboard:article" else None


Query = Annotated[
    str, Field(description=f"What to look for, in words, up to {settings.QUESTION_MAX_CHARS:,} characters.")
]
Question = Annotated[
    str, Field(description=f"The question, up to {settings.QUESTION_MAX_CHARS:,} characters.")
]
Text = Annotated[str, Field(description=f"The text to check, up to {settings.CHECK_MAX_CHARS:,} characters.")]
Sources = Annotated[
    list[str] | None,
    Field(
        description=f"Optional: up to {SOURCES_MAX} source texts to check against instead of the garden "
        "(numbered from 1 in this order, as the claims' source_index)."
    ),
]
AnswerId = Annotated[str, Field(description="The `answer_id` that `ask` returned.")]
ConversationId = Annotated[
    str | None,
    Field(description="Optional: to ask a follow-up, the `conversation` an earlier answer returned."),
]
Title = Annotated[str, Field(description="The article's title, as `search` gives it (any case).")]
Address = Annotated[str, Field(description="Or the article's address (its page), as `search` gives it.")]


def mcp_server(caller: Caller) -> MCPServer:
    """The MCP server whose tools and resources act for the request `caller` returns at each call."""

    def tools() -> GardenTools:
        return GardenTools(caller())

    def reading() -> GardenTools:
        """The tools for a resource that lists the garden: refused to a token made without `read`."""
        garden = tools()
        try:
            admit(garden.request, TokenScope.READ)
        except Refused as refused:
            raise ResourceError(refused.message) from None
        return garden

    server: MCPServer = MCPServer(name="groundwork", title="Groundwork", instructions=INSTRUCTIONS)

    @server.tool(title="Search the garden")
    @_django_call
    def search(query: Query) -> dict[str, Any]:
        """Find the garden's passages for a query, with the retrieval that `ask` uses (no model is called).
        Returns `found` and `passages`, best first: each with its article's `title`, `cited_as`, `address`
        (the article's page), `passage_address`, `page` (of a PDF; null for a note), `score` and `text`.
        None when the garden has nothing on it."""
        return tools().search(query)

    @server.tool(title="Read an article")
    @_django_call
    def read_article(title: Title = "", address: Address = "") -> dict[str, Any]:
        """Read one article of the garden, by its title or its address. Returns its `title`, `address`,
        `updated` (the date of its current text, if known) and `text` (its current Markdown as its page shows it to
        you: a link or embed of a note not shared with you reads "a note not shared with you"). An article the
        garden does not show (private or withheld) is not found."""
        return tools().read_article(title, address)

    @server.tool(title="Ask the garden")
    @_django_call
    def ask(question: Question, conversation: ConversationId = None) -> dict[str, Any]:
        """Ask the garden a question, as the site's ask page does. Returns the `answer` citing `[n]`, its
        `citations` (number, title, cited_as, page, passage, url), `answer_id`, `usage` (tokens, cost) and
        `verdict`: the claim-by-claim verification when done, else `wait` says to call `verdict`. When the garden has
        nothing on the question, `refused` is true, `refusal_reason` says why and no model was called (zero
        tokens). When its notes are near the question but none says what it asks, `abstained` is true and the
        answer says so, naming the notes it looked in. `answers_question` (with `answers_question_label`) says
        whether the answer answers the question: not refused, not abstained, not failed, and not found by its
        check to say only what is near it. With `conversation` (the one an earlier answer returned, of the same
        account), the question is a follow-up in it, searched with what came before; every answer returns its
        `conversation`."""
        return tools().ask(question, conversation)

    @server.tool(title="An answer's verdict")
    @_django_call
    def verdict(answer_id: AnswerId) -> dict[str, Any]:
        """The check of an answer `ask` gave: `status` (pending, running, done, error), and when done the
        `verdict` (grounded, mixed, hallucinating), `risk_score`, `compact` line and `claims`, each with its
        `status` (verified, inferred, unverified, outdated, misattributed, contradicted), `quote`,
        `source_index` and `confidence`; `answers_question` and `answers_question_label` say whether the answer
        answers its question (a grounded answer that does not is labelled ~, never ✓, and its compact line says
        `does not answer`). While pending, `wait` says to call again."""
        return tools().verdict(answer_id)

    @server.tool(title="Fact-check a text")
    @_django_call
    def check(text: Text, sources: Sources = None) -> dict[str, Any]:
        """Fact-check a text (e.g. a draft you wrote) claim by claim against the garden, or against the
        `sources` given. Returns the `verdict` (grounded, mixed, hallucinating), `risk_score`, `risk_label`
        and `claims`, each with its `status` (verified, inferred, unverified, outdated, misattributed,
        contradicted), the supporting `quote`, its `source_index` into `sources` (each with its title and
        url), `source_address` and `confidence`; and the `compact` line, as `POST /api/check` returns it.
        `path_citations`: each `path:line - description` citation in the text, audited against the source tree
        the operator named (CRITIC_SOURCE_TREE) as an answer's are: `status` verified, corrected (with
        `corrected_to`) or dropped, and the `reason` (e.g. line-missing, file-missing, no-source-tree: no tree
        named, or one refused for holding a garden)."""
        return tools().check(text, sources)

    @server.resource(
        "groundwork://articles", name="articles", title="The garden's articles", mime_type="application/json"
    )
    @_django_call
    def articles() -> list[dict[str, str]]:
        """Every article the garden shows, by title: its title, address and resource URI."""
        return [
            {
                "title": article.title,
                "address": site_address(article.get_absolute_url()),
                "uri": f"groundwork://articles/{article.slug}",
            }
            for article in selectors.article_list(reading().reader)
        ]

    @server.resource(
        "groundwork://articles/{slug}", name="article", title="An article", mime_type="text/markdown"
    )
    @_django_call
    def article(slug: str) -> str:
        """An article's current text (Markdown) as its page shows it to you, by its slug (from
        groundwork://articles)."""
        return tools().article_text(slug)

    return server
