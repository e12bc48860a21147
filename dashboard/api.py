"""The JSON API under /api/, with its OpenAPI schema at /api/openapi.json."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import NinjaAPI, Schema, Status

from dashboard.asking import ask
from dashboard.presenters import answer_payload
from garden import selectors
from garden.answering import QuestionError

api = NinjaAPI(
    title="Groundwork API",
    version="1",
    description="Ask the knowledge garden and read answers with their sources and verdicts.",
    urls_namespace="api",
)

ANSWER_NOT_FOUND = "No answer with this id."


class AskIn(Schema):
    question: str


class ErrorOut(Schema):
    error: str


class SourceOut(Schema):
    article: str
    title: str
    score: float


class CitationOut(Schema):
    number: int
    article: str
    title: str
    passage: str
    url: str


class PreflightOut(Schema):
    domain: str
    risk: str
    suggestion: str


class UsageOut(Schema):
    input_tokens: int
    output_tokens: int
    cost_usd: str
    latency_ms: int


class VerificationOut(Schema):
    status: str | None


class AnswerOut(Schema):
    question_id: int
    answer_id: int
    question: str
    refused: bool
    refusal_reason: str | None
    answer: str
    error: str | None
    generator: str
    model: str | None
    sources: list[SourceOut]
    citations: list[CitationOut]
    topics: list[str]
    themes: list[str]
    preflight: PreflightOut
    usage: UsageOut
    verification: VerificationOut


@api.post("/ask", response={200: AnswerOut, 400: ErrorOut}, summary="Ask the garden a question")
def api_ask(request: HttpRequest, payload: AskIn) -> Status[dict[str, Any]]:
    """Answers from the garden's articles (or refuses, at no cost, when it has nothing) and queues the check."""
    try:
        answer = ask(payload.question, request.user)
    except QuestionError as error:
        return Status(400, {"error": error.message})
    loaded = selectors.answer_get(answer.pk)
    assert loaded is not None
    return Status(200, answer_payload(loaded))


@api.get("/answers/{answer_id}", response={200: AnswerOut, 404: ErrorOut}, summary="Fetch an answer")
def api_answer(request: HttpRequest, answer_id: int) -> Status[dict[str, Any]]:
    answer = selectors.answer_get(answer_id)
    if answer is None:
        return Status(404, {"error": ANSWER_NOT_FOUND})
    return Status(200, answer_payload(answer))
