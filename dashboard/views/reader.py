"""Reader pages: ask, the conversation and its answers with their sources and verdicts, articles and topics."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve
from django.utils.html import escape
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from dashboard.actions.answers import answer_read
from dashboard.actions.asking import answer_ask, answer_seen, answer_stream, claude_writes_for, question_admit
from dashboard.actions.refusals import Outcome, Refused
from dashboard.conversations import (
    CONVERSATION_NOT_FOUND,
    STREAM_GONE,
    conversation_is_owned,
    conversations_recent,
    session_remember,
    stream_begin,
    stream_take,
)
from dashboard.forms import AskForm
from dashboard.markdown import EmbedBudget
from dashboard.permissions import (
    ask_required,
    may_see_rejected_quotes,
    may_see_removed_lines,
    request_marker,
    request_reader,
)
from dashboard.shapes.answers import (
    AnswerOut,
    ConversationOut,
    TurnOut,
    answer_shape,
    citations_shape,
    conversation_shape,
)
from dashboard.shapes.verdicts import verdict_shape
from dashboard.streams import ServerSentEvents, event_stream_response, sse_event
from dashboard.templatetags.groundwork import link_citations
from dashboard.views.htmx import HtmxHttpRequest
from garden import selectors
from garden.models import Answer, Article, Conversation, Passage
from garden.removed_lines import PassageShown, passages_without_removed
from garden.sync.git import commit_web_url
from verifier.marks import marks_of
from verifier.selectors import conversation_labels

# An image's bytes never change for its hash, but whether it may be shown does: once the only note showing it is
# withheld it is a 404. So no shared cache keeps it (one would go on serving it to anyone), and the browser that
# was shown it asks again after five minutes: about as long as a page it showed may stay open.
IMAGE_CACHING = "private, max-age=300"


@ask_required
@require_http_methods(["GET", "POST"])
def ask_page(request: HtmxHttpRequest) -> HttpResponse:
    """The question box. A POST answers at once; htmx swaps the answer in, without JavaScript we redirect.
    With `conversation` (the box under a conversation's turns) the question is a follow-up in it. With `stream`
    (the box sends it through htmx) and Claude writing the answer, the page watches it being written instead
    (`_stream_begin`)."""
    # The form draws the box and keeps what was typed; the action alone judges a question, as for the API.
    form = AskForm(request.POST or None)
    error = ""
    if request.method == "POST":
        question, conversation_id = form["question"].value(), request.POST.get("conversation")
        streamed = request.htmx and request.POST.get("stream") and claude_writes_for(request.user)
        try:
            if streamed:  # the page watches Claude write it: the question is kept for the stream to ask
                text, conversation = question_admit(request, question, conversation_id)
                return _stream_begin(request, text, conversation)
            answer = answer_ask(request, question, conversation_id)
        except Refused as refused:
            if refused.outcome is not Outcome.INVALID:
                return _ask_refused(request, refused)
            error = refused.message
        else:
            if not request.user.is_authenticated:
                session_remember(request.session, answer)
            if request.htmx:
                response = _asked(request, answer, follow_up=bool(conversation_id))
                response["HX-Push-Url"] = answer.get_absolute_url()
                return response
            return redirect(answer)
        if request.htmx:
            return render(request, "dashboard/ask.html#ask-error", {"error": error}, status=422)
    recent = conversations_recent(request.user, request.session)
    return render(
        request,
        "dashboard/ask.html",
        {"form": form, "error": error, "recent": recent},
        status=422 if error else 200,
    )


def _stream_begin(request: HtmxHttpRequest, text: str, conversation: Conversation | None) -> HttpResponse:
    """A question the page will watch being answered, admitted as `ask` would admit it, then kept for the stream
    (`ask_stream`), which the placeholder swapped in here fetches."""
    token = stream_begin(request.session, text, conversation)
    context = {"token": token, "question": text, "follow_up": conversation is not None}
    return render(request, "dashboard/conversation.html#streaming", context)


def _ask_refused(request: HtmxHttpRequest, refused: Refused) -> HttpResponse:
    """A question not asked, as the page says it: too many, Claude busy (the box again, with what was typed), a
    conversation not the reader's (404), an answer withheld as it was read (its page, which says why)."""
    if refused.outcome is Outcome.WITHHELD:
        return HttpResponseClientRedirect(refused.address) if request.htmx else redirect(refused.address)
    if refused.outcome is Outcome.NOT_FOUND:
        raise Http404(refused.message)
    if refused.outcome is Outcome.FORBIDDEN:
        raise PermissionDenied(refused.message)
    template = "dashboard/ask.html#ask-error" if request.htmx else "dashboard/ask.html"
    form = AskForm(request.POST) if refused.outcome is Outcome.BUSY else AskForm()
    status = 503 if refused.outcome is Outcome.BUSY else 429
    response = render(request, template, {"error": refused.message, "form": form}, status=status)
    response["Retry-After"] = str(refused.retry_after)
    return response


@ask_required
@require_GET
def ask_stream(request: HtmxHttpRequest, token: str) -> HttpResponse | StreamingHttpResponse:
    """The answer to a question the page kept (`_stream_begin`), as Server-Sent Events: its words as they are
    written (escaped, each whole `[n]` linked to its source), then the stored turn, swapped in for them as the
    page would show it (its verdict polling), then `done`. Taken once: fetched again (the browser reconnects
    after the end), it says the stream is over."""
    kept = stream_take(request.session, token)
    if kept is None:
        return _stream_over(request, STREAM_GONE)
    question, conversation_id = kept
    try:
        stream = answer_stream(request, question, conversation_id, admitted=True)
    except Refused as refused:
        return _stream_over(request, refused.message)
    citations = citations_shape(stream.sources)

    def answer(stored: Answer) -> tuple[str, str]:
        if not request.user.is_authenticated:
            session_remember(request.session, stored)
            request.session.save()  # the response began before the answer was stored
        try:
            loaded = answer_seen(request, stored)
        except Refused as refused:
            page = render(request, "dashboard/ask.html#ask-error", {"error": refused.message})
        else:
            page = _asked(request, loaded, follow_up=conversation_id is not None, pushed=True)
        return "answer", page.content.decode()

    events = ServerSentEvents(
        stream,
        delta=lambda text: link_citations(citations, str(escape(text))),
        answer=answer,
    )
    return event_stream_response(events, ending="done")


def _stream_over(request: HtmxHttpRequest, message: str) -> StreamingHttpResponse:
    """A stream with nothing to write: the message in the answer's place, then `done`, which ends it."""
    page = render(request, "dashboard/ask.html#ask-error", {"error": message}).content.decode()
    return event_stream_response([sse_event("answer", page), sse_event("done", "")])


def _asked(
    request: HtmxHttpRequest, answer: Answer, *, follow_up: bool, pushed: bool = False
) -> HttpResponse:
    """What htmx swaps in for a question just answered: a follow-up's turn, added under the turns before it
    (with a fresh box and the conversation's label out of band); a first question's conversation, whole.
    `pushed`: swapped in at the end of a stream, so it takes the browser to the answer's address itself."""
    conversation = answer.question.conversation
    assert conversation is not None  # every question asked is stored in one
    pushed_url = answer.get_absolute_url() if pushed else ""
    if follow_up:
        context = {
            "turn": TurnOut(turn=answer.question.turn, answer=_shape(request, answer)),
            "conversation": _conversation_out(request, conversation, [answer], labels_only=True),
            "form": _next_box(),
            "may_continue": True,
            "pushed_url": pushed_url,
        }
        return render(request, "dashboard/conversation.html#follow-up", context)
    return render(
        request,
        "dashboard/conversation.html#conversation",
        {
            "conversation": _conversation_out(request, conversation, [answer]),
            "form": _next_box(),
            "may_continue": True,
            "pushed_url": pushed_url,
        },
    )


def _shape(request: HttpRequest, answer: Answer) -> AnswerOut:
    """The answer with its verdict, as its page shows it to this user. Polled every 2 s: the queries do not grow
    with the claims (`verification_for_answer`)."""
    verdict = verdict_shape(
        answer,
        reader=request_reader(request),
        hidden=selectors.answer_links_hidden(answer),
        rejected_quotes=may_see_rejected_quotes(request),
    )
    return answer_shape(answer, reader=request_reader(request), verdict=verdict)


def _answer_or_404(request: HttpRequest, public_id: uuid.UUID) -> Answer:
    try:
        return answer_read(request, public_id)
    except Refused as refused:  # not found, or withheld: the page says why, nothing more (templates/404.html)
        raise Http404(refused.message if refused.outcome is Outcome.WITHHELD else "No such answer.") from None


def _conversation_out(
    request: HttpRequest,
    conversation: Conversation,
    answers: list[Answer],
    *,
    labels_only: bool = False,
    through: int | None = None,
    named: bool = True,
) -> ConversationOut:
    """The conversation as its page shows it: `answers` (its turns, loaded) each with its verdict; one this
    reader may not see in its place without its text, saying why (`selectors.answer_hidden_reason`); its worst
    label from the checks of the turns they may see (with `through`, up to that turn). `labels_only`: the label
    alone (for the header swapped beside a new turn). `named`: with its id and address, which lead to all its
    turns (not on an answer's page shown to a reader who is not its owner)."""
    reader = request_reader(request)
    turns = []
    for answer in [] if labels_only else answers:
        hidden = selectors.answer_hidden_reason(answer, reader)
        shown = None if hidden is not None else _shape(request, answer)
        turns.append(TurnOut(turn=answer.question.turn, answer=shown, hidden=hidden or ""))
    out = conversation_shape(conversation, turns, conversation_labels(conversation, reader, through=through))
    return out if named else dataclasses.replace(out, conversation_id="", url="")


def _next_box() -> AskForm:
    """The box to ask the next question in, its ids apart from the home page's box above it."""
    return AskForm(auto_id="next_%s")


def _may_continue(request: HttpRequest, conversation: Conversation) -> bool:
    return conversation_is_owned(conversation, request.user, request.session)


def _conversation_render(
    request: HtmxHttpRequest, conversation: Conversation, highlighted: Answer | None = None
) -> HttpResponse:
    """The conversation's page of CONVERSATION_TURNS_PER_PAGE turns: the one `?page=` asks for, else the last
    (where the next turn is asked, so the box is on it alone). At an answer's address (`highlighted`), its turns
    up to that answer only, paged at that address, opening on the answer: a link to one answer shares no later
    turn, and only the owner is given the conversation's own address."""
    asked = conversation.questions.count()
    through = highlighted.question.turn if highlighted is not None else None
    turns = Paginator(range(1, (through or asked) + 1), settings.CONVERSATION_TURNS_PER_PAGE)
    page = turns.get_page(request.GET.get("page") or turns.num_pages)
    shown = range(page.object_list[0], page.object_list[-1] + 1) if page.object_list else range(0)
    answers = selectors.conversation_answers(conversation, request_reader(request), shown)
    owned = _may_continue(request, conversation)
    context = {
        "conversation": _conversation_out(
            request, conversation, answers, through=through, named=owned or highlighted is None
        ),
        "marks": marks_of(request_marker(request), answers),
        "highlighted": str(highlighted.public_id) if highlighted else "",
        "form": _next_box(),
        "may_continue": owned and not page.has_next() and (through is None or through == asked),
        "page": page,
        "pages_at": (highlighted or conversation).get_absolute_url(),
    }
    return render(request, "dashboard/conversation.html", context)


@ask_required
@require_GET
def conversation_page(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    """The turns in order, each with its verdict filling in live, and (for its owner) a box to ask the next.
    Whoever has the link may read it, as an answer's."""
    conversation = selectors.conversation_get(public_id)
    if conversation is None:
        raise Http404(CONVERSATION_NOT_FOUND)
    return _conversation_render(request, conversation)


@ask_required
@require_GET
def answer_page(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    """An answer's address: its conversation, with this turn highlighted."""
    answer = _answer_or_404(request, public_id)
    conversation = answer.question.conversation
    if conversation is None:  # a question stored outside any conversation (none is, since conversations)
        context = {
            "answer": _shape(request, answer),
            "marks": marks_of(request_marker(request), [answer]),
            "form": AskForm(),
        }
        return render(request, "dashboard/answer.html", context)
    return _conversation_render(request, conversation, highlighted=answer)


@ask_required
@require_GET
def verdict_partial(request: HtmxHttpRequest, public_id: uuid.UUID) -> HttpResponse:
    """The verdict panel alone; it keeps polling itself until the verification has finished."""
    answer = _answer_or_404(request, public_id)
    if not request.htmx:
        return redirect(answer)
    # Once the verdict is in, the answer text above it is swapped too, now with its claims highlighted, and the
    # conversation's worst label at the top.
    conversation = answer.question.conversation
    context = {
        "answer": _shape(request, answer),
        "marks": marks_of(request_marker(request), [answer]),
        "oob": True,
        "conversation": _verdict_label(request, conversation, answer) if conversation else None,
    }
    return render(request, "dashboard/answer.html#verdict", context)


def _verdict_label(request: HtmxHttpRequest, conversation: Conversation, answer: Answer) -> ConversationOut:
    """The conversation's label swapped in beside a verdict, as the page polling it (`HX-Current-URL`) shows it:
    the conversation's own page, the whole; an answer's page, its turns up to that answer and without the
    conversation's id unless the reader owns it (`_conversation_render`); any other, its turns up to `answer`."""
    path = urlsplit(request.htmx.current_url or "").path
    if path == conversation.get_absolute_url():
        return _conversation_out(request, conversation, [], labels_only=True)
    through = answer.question.turn
    try:
        polling = resolve(path)
    except Resolver404:
        polling = None
    if polling is not None and polling.view_name == "dashboard:answer":
        opened = conversation.questions.filter(answer__public_id=polling.kwargs["public_id"])
        through = opened.values_list("turn", flat=True).first() or through
    named = _may_continue(request, conversation)
    return _conversation_out(request, conversation, [], labels_only=True, through=through, named=named)


def _page(request: HttpRequest, articles: QuerySet[Article]) -> Page[Article]:
    """The page of `articles` that `?page=` asks for: the first for anything but a number, the last past it."""
    return Paginator(articles, settings.ARTICLES_PER_PAGE).get_page(request.GET.get("page"))


# The wiki itself is public: anyone may read articles and topics.
@require_GET
def article_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "dashboard/article_list.html",
        {"page": _page(request, selectors.article_list(request_reader(request)))},
    )


@require_GET
def article_page(request: HttpRequest, slug: str) -> HttpResponse:
    reader = request_reader(request)
    article = selectors.article_get(slug, reader)
    if article is None:
        raise Http404("No such article.")
    revision_param = request.GET.get("revision")
    revision_id = int(revision_param) if revision_param and revision_param.isdigit() else None
    revision = selectors.article_revision(article, revision_id, reader)
    if revision is None:
        raise Http404("No such revision of this article.")
    passages: Iterable[Passage | PassageShown] = selectors.revision_passages(revision, reader)
    current = selectors.article_revision(article, None, reader) if revision.superseded else None
    if current is not None and not may_see_removed_lines(request):
        passages = passages_without_removed(passages, selectors.revision_passages(current, reader))
    return render(
        request,
        "dashboard/article.html",
        {
            "article": article,
            "revision": revision,
            "passages": passages,
            "revisions": article.revisions.all(),
            "commit_url": commit_web_url(revision.commit, revision.source_path, article.garden),
            "backlinks": selectors.article_backlinks(article, reader),
            "page": {
                "links": selectors.article_links(article, revision, reader=reader),
                "embeds": selectors.article_embeds(revision, reader),
                "images": selectors.revision_images(revision),
                "embed_budget": EmbedBudget(),  # one for the page: its passages are rendered one by one
            },
        },
    )


@require_GET
def image(request: HttpRequest, sha256: str, name: str) -> HttpResponse:
    """An image a note shows, by its content's hash, while a revision a reader may see shows it."""
    stored = selectors.image_get(sha256, request_reader(request))
    if stored is None:
        raise Http404("No such image.")
    response = HttpResponse(bytes(stored.data), content_type=stored.content_type)
    response["Cache-Control"] = IMAGE_CACHING
    return response


@require_GET
def topic_page(request: HttpRequest, slug: str) -> HttpResponse:
    reader = request_reader(request)
    topic = selectors.topic_get(slug, reader)
    if topic is None:
        raise Http404("No such topic.")
    articles = _page(request, topic.articles.live(reader).order_by("title", "pk"))
    return render(request, "dashboard/topic.html", {"topic": topic, "page": articles})
