"""The JSON API under /api/, with its OpenAPI schema at /api/openapi.json."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from ninja import Field, NinjaAPI, Schema, Status
from ninja.errors import HttpError
from ninja.openapi.schema import OpenAPISchema
from ninja.utils import check_csrf
from pydantic import StrictBool

from claimcheck.terms import ClaimStatus, RiskLabel, Verdict
from dashboard.asking import (
    ConversationNotFound,
    ask,
    ask_streaming,
    conversation_is_owned,
    conversation_owned,
)
from dashboard.bearer import BearerRefused, bearer_authenticate, request_spender, scope_missing
from dashboard.claude_slots import CLAUDE_BUSY, CLAUDE_BUSY_RETRY_AFTER, ClaudeBusy, claude_slot
from dashboard.permissions import (
    check_mode,
    may_ask,
    may_check,
    may_see_rejected_quotes,
    request_marker,
    request_reader,
)
from dashboard.presenters import check_sources, checked_payload, health_payload
from dashboard.ratelimit import (
    MARK_RATE_LIMITED,
    RATE_LIMITED,
    REPORTS_DAY_SPENT,
    rate_limited,
    reports_limited,
)
from dashboard.shapes import CITED_AS, AnswerOut, VerdictOut, answer_shape, shape_json, verdict_shape
from dashboard.streams import EVENT_STREAM, ServerSentEvents, event_stream_response
from garden import selectors
from garden.answering.asking import AnswerStream, QuestionError
from garden.models import Answer
from verifier.budget import spending_for
from verifier.checking import CheckError, garden_check
from verifier.health import health_check
from verifier.marks import answer_mark_record, claim_report_record
from verifier.models import Claim
from verifier.review import ReviewError
from verifier.roles import VIEW_LOGS
from verifier.scopes import TokenScope

CSRF_FAILED = (
    "This request carries a session cookie but no valid CSRF token: send the csrftoken cookie's value in the "
    "X-CSRFToken header, or call the API without the session cookie."
)


# The OpenAPI name of the personal-token scheme.
BEARER_SCHEME = "PersonalToken"


class GroundworkAPI(NinjaAPI):
    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        """The schema, with the personal-token scheme every operation accepts (`api_caller` checks it for all of
        them, before ninja's own auth, so ninja does not list it): with a token, or without one (as a visitor,
        or with a session cookie and its CSRF token), each endpoint then checking its own permission."""
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        schema["components"].setdefault("securitySchemes", {})[BEARER_SCHEME] = {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (gw_…) from your account page: the call acts as you.",
        }
        schema["security"] = [{BEARER_SCHEME: []}, {}]
        refused = {
            "description": "The Authorization header names no active personal token (malformed, unknown or "
            "revoked).",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
        }
        for path, operations in schema["paths"].items():
            for operation in operations.values():
                operation["responses"].setdefault("401", refused)
            # `/api/ask` answers 200 in JSON, or with `stream` as Server-Sent Events: both are documented.
            if path.endswith("/ask"):
                operations["post"]["responses"][200]["content"][EVENT_STREAM] = ASK_STREAMED
        return schema


api = GroundworkAPI(
    title="Groundwork API",
    version="1",
    description="Ask the knowledge garden and read answers with their sources and verdicts. Send "
    "`Authorization: Bearer <token>` with a personal token from your account page to call it as yourself.",
    urls_namespace="api",
)


def api_caller(run: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Who a call acts as. Whoever calls the API may use it (each endpoint checks its own permission).

    - With `Authorization: Bearer <token>`: as the token's user, needing no CSRF token (`dashboard.bearer`); a
      header that names no active token is refused (401), never served as a visitor's call.
    - With the session cookie: as that session, so it must pass Django's CSRF check, as a form does: another
      site cannot make a reader's browser ask, check or spend in the reader's name.
    - With neither: as a visitor; it needs no token, as it borrows nobody's session.
    """

    @wraps(run)
    def checked(request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        try:
            token = bearer_authenticate(request)
        except BearerRefused as refused:
            response = api.create_response(request, {"error": refused.message}, status=401)
            response["WWW-Authenticate"] = 'Bearer realm="api"'
            return response
        if token is None and settings.SESSION_COOKIE_NAME in request.COOKIES and check_csrf(request):
            return api.create_response(request, {"error": CSRF_FAILED}, status=403)
        return run(request, **kwargs)

    return checked


api.add_decorator(api_caller, mode="view")  # before the request is read: every operation, present and future


@api.exception_handler(HttpError)
def api_http_error(request: HttpRequest, error: HttpError) -> HttpResponse:
    """Every error the framework raises (e.g. a body that is not JSON) in the API's one error shape."""
    message = BODY_NOT_JSON if error.status_code == 400 else str(error)
    return api.create_response(request, {"error": message}, status=error.status_code)


@api.exception_handler(RequestDataTooBig)
def api_body_too_big(request: HttpRequest, error: RequestDataTooBig) -> HttpResponse:
    """A body over REQUEST_MAX_BYTES, refused from its Content-Length before a byte of it is read."""
    return api.create_response(
        request, {"error": BODY_TOO_BIG.format(limit=settings.REQUEST_MAX_BYTES)}, status=413
    )


BODY_NOT_JSON = 'The request body must be a JSON object, e.g. {"question": "..."}.'
BODY_TOO_BIG = "The request body is limited to {limit:,} bytes."
ANSWER_NOT_FOUND = "No answer with this id."
ASK_FORBIDDEN = "Log in as a reader (or above) to use this endpoint."
CLAIM_NOT_FOUND = "This answer has no claim with this id."
MARK_NEEDS_READER = (
    "A mark is kept as its reader's own: call with a personal token (or the site's session cookie) to mark."
)
CHECK_FORBIDDEN = (
    "Fact-checking is for readers: log in as a reader (or above) to use this endpoint "
    "(visitors may check text only when ANONYMOUS_CAN_CHECK is on)."
)


# The limits are documented in the schema but checked by the services, so clients get their clear messages.
# A text must hold a character the services keep: not whitespace (as Python's `str.strip` sees it) and not NUL,
# which is dropped before storing (PostgreSQL text cannot hold it).
NOT_BLANK = r"[^\s\u0000\u001c-\u001f\u0085]"


class AskIn(Schema):
    question: str = Field(
        description=f"The question, up to {settings.QUESTION_MAX_CHARS:,} characters.",
        json_schema_extra={"minLength": 1, "maxLength": settings.QUESTION_MAX_CHARS, "pattern": NOT_BLANK},
    )
    conversation: str | None = Field(
        None,
        description="To ask a follow-up: the `conversation` an earlier answer returned. It must be the caller's "
        "own (a visitor's: started in the same session); any other id is 404. Without it, a new conversation "
        "starts.",
    )
    stream: StrictBool = Field(
        False,
        description="True: the answer comes as Server-Sent Events (`text/event-stream`) while it is written: "
        '`delta` events (`{"text": ...}`, to add to what came before; never cut inside a `[n]` citation), '
        "then one `answer` event with the stored answer (as this endpoint returns it without `stream`), or "
        'an `error` event (`{"error": ...}`) if it was withheld meanwhile. An answer whose stream broke is '
        "stored with its `error` saying what happened and no text. An abstention (the notes do not say what is "
        "asked) is one `delta` of its fixed text: the model's own words for it are never sent.",
    )


# With `stream`: each Server-Sent Event, its `data` a JSON object (see `AskIn.stream`).
ASK_STREAMED = {
    "schema": {
        "type": "object",
        "properties": {
            "event": {"type": "string", "enum": ["delta", "answer", "error"]},
            "data": {"type": "string", "description": "JSON: a delta's text, the answer, or the error."},
        },
        "required": ["event", "data"],
    },
    "example": 'event: delta\ndata: {"text": "The viaduct is 230 m long [1]."}\n\n'
    'event: answer\ndata: {"answer_id": "...", "answer": "...", ...}\n\n',
}


class ErrorOut(Schema):
    error: str


class ValidationOut(Schema):
    """The request did not match the schema (a missing or mistyped field)."""

    detail: list[dict[str, Any]]


class SyncFailureOut(Schema):
    path: str
    reason: str


class GardenSyncOut(Schema):
    last_sync: str | None = Field(description="When the garden was last synced (ISO 8601).")
    refused: str = Field(description="Why the last sync changed nothing, if it did not.")
    failures: list[SyncFailureOut] = Field(
        description="Notes the last sync could not import (withheld from readers), with why; empty unless "
        "the caller may read the logs."
    )


class HealthOut(Schema):
    status: str = Field(
        description="ok; degraded: verdicts are held up (see problems); down: questions cannot be answered."
    )
    database: str = Field(description="ok or down")
    redis: str = Field(description="ok or down (Celery's broker)")
    workers_seen: int = Field(description="Celery workers that reported themselves alive in the last minute.")
    waiting: int = Field(description="Verifications pending or running.")
    stuck: int = Field(description="Of those, how many have waited longer than the requeue window.")
    oldest_waiting_seconds: float | None = Field(description="Age of the oldest verification still waiting.")
    problems: list[str] = Field(description="Each problem in words, for operators.")
    garden: GardenSyncOut = Field(description="The garden's last sync (its failures: for operators only).")


class CheckIn(Schema):
    text: str = Field(
        description=f"Any text to fact-check against the garden, up to {settings.CHECK_MAX_CHARS:,} characters.",
        json_schema_extra={"minLength": 1, "maxLength": settings.CHECK_MAX_CHARS, "pattern": NOT_BLANK},
    )


class CheckedClaimOut(Schema):
    text: str
    status: ClaimStatus
    quote: str
    source_index: int | None
    confidence: float
    flags: list[str]


class CheckSourceOut(Schema):
    number: int
    article: str
    title: str
    page: int | None = Field(None, description="The page of a PDF the passage is on; null for a note.")
    cited_as: str = Field(description=CITED_AS)
    url: str


class CheckOut(Schema):
    verdict: Verdict
    risk_score: int
    risk_label: RiskLabel
    delta_score: float
    judge_available: bool
    disclosure: str | None
    compact: str = Field(description="The compact line, e.g. [Hall: ⚠ · 78/100 · 2 judges · 3 flags].")
    claims: list[CheckedClaimOut]
    sources: list[CheckSourceOut]


@api.post(
    "/ask",
    response={
        200: AnswerOut,
        400: ErrorOut,
        403: ErrorOut,
        404: ErrorOut,
        413: ErrorOut,
        429: ErrorOut,
        422: ValidationOut,
        503: ErrorOut,
    },
    summary="Ask the garden a question",
)
def api_ask(
    request: HttpRequest, payload: AskIn, response: HttpResponse
) -> Status[AnswerOut | dict[str, str]] | StreamingHttpResponse:
    """Answers from the garden's articles (or refuses, at no cost, when it has nothing) and queues the check.
    With `conversation`, the question is a follow-up in it, retrieved with what came before; the answer
    returns its `conversation` either way. With `stream`, the answer's words come as they are written
    (`text/event-stream`); the check is queued once the answer is whole."""
    if (why := scope_missing(request, TokenScope.ASK)) is not None:
        return Status(403, {"error": why})
    if not may_ask(request):
        return Status(403, {"error": ASK_FORBIDDEN})
    if (wait := rate_limited(request, "ask")) is not None:
        response["Retry-After"] = str(wait)
        return Status(429, {"error": RATE_LIMITED})
    try:
        conversation = conversation_owned(payload.conversation, request.user, request.session)
        with spending_for(request_spender(request)):  # a streamed follow-up's condensing is booked now
            if payload.stream:
                stream = ask_streaming(payload.question, request.user, claude_slot(), conversation)
                return event_stream_response(_answer_events(request, stream))
            answer = ask(payload.question, request.user, claude_slot(), conversation)
    except ConversationNotFound as error:
        return Status(404, {"error": error.message})
    except QuestionError as error:
        return Status(400, {"error": error.message})
    except ClaudeBusy:
        return _claude_busy(response)
    reader = request_reader(request)
    loaded = selectors.answer_get(answer.public_id, reader)
    if loaded is None:
        return Status(404, {"error": selectors.answer_hidden_message(reader)})
    # A source was withheld between the answer and this read.
    if (why := selectors.answer_hidden_why(loaded, reader)) is not None:
        return Status(404, {"error": why})
    return Status(200, answer_shape(loaded, reader=reader))


def _answer_events(request: HttpRequest, stream: AnswerStream) -> ServerSentEvents:
    """The stream's events for the API: `delta`s as JSON text, then the stored `answer` as the endpoint
    returns it without `stream` (an `error` when it was withheld meanwhile)."""
    reader = request_reader(request)

    def answer(stored: Answer) -> tuple[str, str]:
        loaded = selectors.answer_get(stored.public_id, reader)
        why = (
            selectors.answer_hidden_message(reader)
            if loaded is None
            else selectors.answer_hidden_why(loaded, reader)
        )
        if loaded is None or why is not None:
            return "error", json.dumps({"error": why})
        return "answer", json.dumps(shape_json(answer_shape(loaded, reader=reader)))

    return ServerSentEvents(
        stream,
        spender=request_spender(request),
        delta=lambda text: json.dumps({"text": text}),
        answer=answer,
    )


@api.get(
    "/answers/{answer_id}",
    response={200: AnswerOut, 404: ErrorOut, 403: ErrorOut, 422: ValidationOut},
    summary="Fetch an answer",
)
def api_answer(request: HttpRequest, answer_id: str) -> Status[AnswerOut | dict[str, str]]:
    answer = _answer_shown(request, answer_id)
    if isinstance(answer, Status):
        return Status(answer.status_code, answer.value)
    shape = answer_shape(answer, reader=request_reader(request))
    conversation = answer.question.conversation
    if conversation is not None and not conversation_is_owned(conversation, request.user, request.session):
        # Its id leads to every turn: whoever was given one answer's address is given no later turn.
        shape = dataclasses.replace(shape, conversation=None)
    return Status(200, shape)


@api.get(
    "/answers/{answer_id}/verdict",
    response={200: VerdictOut, 404: ErrorOut, 403: ErrorOut, 422: ValidationOut},
    summary="An answer's verdict",
)
def api_verdict(request: HttpRequest, answer_id: str) -> Status[VerdictOut | dict[str, str]]:
    """Claims with statuses, quotes, flags and juror votes; `status` is pending/running until the judge is done."""
    if (why := scope_missing(request, TokenScope.ASK)) is not None:
        return Status(403, {"error": why})
    if not may_ask(request):
        return Status(403, {"error": ASK_FORBIDDEN})
    public_id = _public_id(answer_id)
    answer = Answer.objects.filter(public_id=public_id).first() if public_id else None
    if answer is None:
        return Status(404, {"error": ANSWER_NOT_FOUND})
    if (why := selectors.verdict_hidden_why(answer, request_reader(request))) is not None:
        return Status(404, {"error": why})
    verdict = verdict_shape(
        answer,
        reader=request_reader(request),
        rejected_quotes=may_see_rejected_quotes(request),
    )
    return Status(200, verdict)


class MarkIn(Schema):
    helpful: bool = Field(description="Whether the answer helped; a second mark replaces the first.")


class ReportIn(Schema):
    note: str = Field(
        "",
        description=f"Why the claim is wrong, optional, up to {settings.REVIEW_NOTE_MAX_CHARS:,} characters.",
        json_schema_extra={"maxLength": settings.REVIEW_NOTE_MAX_CHARS},
    )


class MarkedOut(Schema):
    answer_id: str
    helpful: bool


class ReportedOut(Schema):
    answer_id: str
    claim_id: int
    note: str


def _answer_shown(request: HttpRequest, answer_id: str) -> Answer | Status[dict[str, str]]:
    """The answer, when this caller may ask and may see it (to read or mark it), or the refusal to send."""
    if (why := scope_missing(request, TokenScope.ASK)) is not None:
        return Status(403, {"error": why})
    if not may_ask(request):
        return Status(403, {"error": ASK_FORBIDDEN})
    reader = request_reader(request)
    public_id = _public_id(answer_id)
    answer = selectors.answer_get(public_id, reader) if public_id else None
    if answer is None:
        return Status(404, {"error": ANSWER_NOT_FOUND})
    if (why := selectors.answer_hidden_why(answer, reader)) is not None:
        return Status(404, {"error": why})
    return answer


# 400: a body that is not JSON (or, for a report, a note over the limit).
MARK_RESPONSES = {400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ValidationOut, 429: ErrorOut}


@api.post(
    "/answers/{answer_id}/mark",
    response={200: MarkedOut, **MARK_RESPONSES},
    summary="Mark an answer helpful or not",
)
def api_answer_mark(
    request: HttpRequest, answer_id: str, payload: MarkIn, response: HttpResponse
) -> Status[dict[str, Any]]:
    """The caller's own mark, seen by no other reader; the operators' logs count the answers marked unhelpful."""
    answer = _answer_shown(request, answer_id)
    if isinstance(answer, Status):
        return answer
    if (wait := rate_limited(request, "mark")) is not None:
        response["Retry-After"] = str(wait)
        return Status(429, {"error": MARK_RATE_LIMITED})
    if (marker := request_marker(request)) is None:
        return Status(403, {"error": MARK_NEEDS_READER})
    answer_mark_record(answer=answer, marker=marker, user=request.user, helpful=payload.helpful)
    return Status(200, {"answer_id": str(answer.public_id), "helpful": payload.helpful})


@api.post(
    "/answers/{answer_id}/claims/{claim_id}/report",
    response={200: ReportedOut, **MARK_RESPONSES},
    summary="Report a claim of an answer wrong",
)
def api_claim_report(
    request: HttpRequest, answer_id: str, claim_id: int, payload: ReportIn, response: HttpResponse
) -> Status[dict[str, Any]]:
    """The caller's own report (a second replaces the first): the claim goes to the editors' review queue."""
    answer = _answer_shown(request, answer_id)
    if isinstance(answer, Status):
        return answer
    claim = Claim.objects.filter(pk=claim_id, is_claim=True, verification__answer=answer).first()
    if claim is None:
        return Status(404, {"error": CLAIM_NOT_FOUND})
    if (wait := rate_limited(request, "mark")) is not None:
        response["Retry-After"] = str(wait)
        return Status(429, {"error": MARK_RATE_LIMITED})
    if (marker := request_marker(request)) is None:
        return Status(403, {"error": MARK_NEEDS_READER})
    if (wait := reports_limited(request)) is not None:
        response["Retry-After"] = str(wait)
        return Status(429, {"error": REPORTS_DAY_SPENT.format(limit=settings.REPORTS_PER_ADDRESS_PER_DAY)})
    try:
        report = claim_report_record(claim=claim, marker=marker, user=request.user, note=payload.note)
    except ReviewError as error:
        return Status(400, {"error": error.message})
    return Status(200, {"answer_id": str(answer.public_id), "claim_id": claim.pk, "note": report.note})


def _claude_busy(response: HttpResponse) -> Status[Any]:
    """Every thread this process lets wait on Claude is waiting: try again shortly, rather than queue."""
    response["Retry-After"] = str(CLAUDE_BUSY_RETRY_AFTER)
    return Status(503, {"error": CLAUDE_BUSY})


def _public_id(answer_id: str) -> uuid.UUID | None:
    """The answer id of a path, or None for anything else (an old numeric id is not found, not malformed)."""
    try:
        return uuid.UUID(answer_id)
    except ValueError:
        return None


@api.post(
    "/check",
    response={
        200: CheckOut,
        400: ErrorOut,
        403: ErrorOut,
        413: ErrorOut,
        429: ErrorOut,
        422: ValidationOut,
        503: ErrorOut,
    },
    summary="Fact-check any text against the garden",
)
def api_check(request: HttpRequest, payload: CheckIn, response: HttpResponse) -> Status[dict[str, Any]]:
    """Retrieves the garden's passages for the text and judges each of its claims against them. Visitors who are
    not logged in may check only when ANONYMOUS_CAN_CHECK is on, and then with the local judge alone."""
    if (why := scope_missing(request, TokenScope.CHECK)) is not None:
        return Status(403, {"error": why})
    if not may_check(request):
        return Status(403, {"error": CHECK_FORBIDDEN})
    if (wait := rate_limited(request, "check")) is not None:
        response["Retry-After"] = str(wait)
        return Status(429, {"error": RATE_LIMITED})
    try:
        with spending_for(request_spender(request)):
            checked, passages = garden_check(
                payload.text,
                mode=check_mode(request),
                claude_slot=claude_slot(),
                reader=request_reader(request),
            )
    except CheckError as error:
        return Status(400, {"error": error.message})
    except ClaudeBusy:
        return _claude_busy(response)
    out = checked_payload(checked, check_sources(passages), rejected_quotes=may_see_rejected_quotes(request))
    return Status(200, out)


@api.get("/health", response={200: HealthOut, 503: HealthOut}, summary="Whether answers are being verified")
def api_health(request: HttpRequest) -> Status[dict[str, Any]]:
    """The database, Redis, the workers seen in the last minute and the age of the oldest waiting
    verification; 503 when the database is down, 200 otherwise (with `status` degraded when verdicts wait)."""
    health = health_check()
    payload = health_payload(health, operator=request.user.has_perm(VIEW_LOGS))
    return Status(503 if health.status == "down" else 200, payload)
