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
from dashboard.actions.answers import answer_mark, answer_read, claim_report, verdict_read
from dashboard.actions.asking import CallerStream, answer_ask, answer_seen, answer_stream
from dashboard.actions.checking import text_check
from dashboard.actions.refusals import Outcome, Refused
from dashboard.bearer import BearerRefused, bearer_authenticate
from dashboard.conversations import conversation_is_owned
from dashboard.permissions import may_see_rejected_quotes, request_reader
from dashboard.presenters import check_sources, checked_payload, health_payload
from dashboard.shapes import shape_json
from dashboard.shapes.answers import AnswerOut, answer_shape
from dashboard.shapes.fields import CITED_AS
from dashboard.shapes.verdicts import VerdictOut, verdict_shape
from dashboard.streams import EVENT_STREAM, ServerSentEvents, event_stream_response
from garden.models import Answer
from verifier.health import health_check
from verifier.roles import VIEW_LOGS

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


@api.exception_handler(Refused)
def api_refused(request: HttpRequest, refused: Refused) -> HttpResponse:
    """An action not done, in the API's one error shape: its status by the outcome, and when to try again."""
    response = api.create_response(
        request, {"error": refused.message}, status=REFUSED_STATUS[refused.outcome]
    )
    if refused.retry_after is not None:
        response["Retry-After"] = str(refused.retry_after)
    return response


# Each refusal's status; a withheld answer is not found, as one never shared is (nothing tells the two apart).
REFUSED_STATUS = {
    Outcome.FORBIDDEN: 403,
    Outcome.NOT_FOUND: 404,
    Outcome.INVALID: 400,
    Outcome.LIMITED: 429,
    Outcome.BUSY: 503,
    Outcome.WITHHELD: 404,
}


@api.exception_handler(RequestDataTooBig)
def api_body_too_big(request: HttpRequest, error: RequestDataTooBig) -> HttpResponse:
    """A body over REQUEST_MAX_BYTES, refused from its Content-Length before a byte of it is read."""
    return api.create_response(
        request, {"error": BODY_TOO_BIG.format(limit=settings.REQUEST_MAX_BYTES)}, status=413
    )


BODY_NOT_JSON = 'The request body must be a JSON object, e.g. {"question": "..."}.'
BODY_TOO_BIG = "The request body is limited to {limit:,} bytes."


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
    if payload.stream:
        stream = answer_stream(request, payload.question, payload.conversation)
        return event_stream_response(_answer_events(request, stream))
    answer = answer_ask(request, payload.question, payload.conversation)
    return Status(200, answer_shape(answer, reader=request_reader(request)))


def _answer_events(request: HttpRequest, stream: CallerStream) -> ServerSentEvents:
    """The stream's events for the API: `delta`s as JSON text, then the stored `answer` as the endpoint
    returns it without `stream` (an `error` when it was withheld meanwhile)."""
    reader = request_reader(request)

    def answer(stored: Answer) -> tuple[str, str]:
        try:
            loaded = answer_seen(request, stored)
        except Refused as refused:
            return "error", json.dumps({"error": refused.message})
        return "answer", json.dumps(shape_json(answer_shape(loaded, reader=reader)))

    return ServerSentEvents(
        stream,
        delta=lambda text: json.dumps({"text": text}),
        answer=answer,
    )


@api.get(
    "/answers/{answer_id}",
    response={200: AnswerOut, 404: ErrorOut, 403: ErrorOut, 422: ValidationOut},
    summary="Fetch an answer",
)
def api_answer(request: HttpRequest, answer_id: str) -> Status[AnswerOut | dict[str, str]]:
    answer = answer_read(request, answer_id)
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
    answer = verdict_read(request, answer_id)
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


# 400: a body that is not JSON (or, for a report, a note over the limit).
MARK_RESPONSES = {400: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ValidationOut, 429: ErrorOut}


@api.post(
    "/answers/{answer_id}/mark",
    response={200: MarkedOut, **MARK_RESPONSES},
    summary="Mark an answer helpful or not",
)
def api_answer_mark(request: HttpRequest, answer_id: str, payload: MarkIn) -> Status[dict[str, Any]]:
    """The caller's own mark, seen by no other reader; the operators' logs count the answers marked unhelpful."""
    answer = answer_mark(request, answer_id, helpful=payload.helpful)
    return Status(200, {"answer_id": str(answer.public_id), "helpful": payload.helpful})


@api.post(
    "/answers/{answer_id}/claims/{claim_id}/report",
    response={200: ReportedOut, **MARK_RESPONSES},
    summary="Report a claim of an answer wrong",
)
def api_claim_report(
    request: HttpRequest, answer_id: str, claim_id: int, payload: ReportIn
) -> Status[dict[str, Any]]:
    """The caller's own report (a second replaces the first): the claim goes to the editors' review queue."""
    report = claim_report(request, answer_id, claim_id, note=payload.note)
    return Status(200, {"answer_id": str(uuid.UUID(answer_id)), "claim_id": claim_id, "note": report.note})


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
def api_check(request: HttpRequest, payload: CheckIn) -> Status[dict[str, Any]]:
    """Retrieves the garden's passages for the text and judges each of its claims against them. Visitors who are
    not logged in may check only when ANONYMOUS_CAN_CHECK is on, and then with the local judge alone."""
    done = text_check(request, payload.text)
    sources = check_sources(done.passages or [])
    return Status(
        200, checked_payload(done.checked, sources, rejected_quotes=may_see_rejected_quotes(request))
    )


@api.get("/health", response={200: HealthOut, 503: HealthOut}, summary="Whether answers are being verified")
def api_health(request: HttpRequest) -> Status[dict[str, Any]]:
    """The database, Redis, the workers seen in the last minute and the age of the oldest waiting
    verification; 503 when the database is down, 200 otherwise (with `status` degraded when verdicts wait)."""
    health = health_check()
    payload = health_payload(health, operator=request.user.has_perm(VIEW_LOGS))
    return Status(503 if health.status == "down" else 200, payload)
