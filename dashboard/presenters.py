"""The JSON shape of an answer, shared by the API and the `ask` command."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from garden.models import Answer


def passage_url(article_slug: str, revision_id: int, chunk_id: int, *, current: bool) -> str:
    url = reverse("dashboard:article", args=[article_slug])
    return (url if current else f"{url}?revision={revision_id}") + f"#chunk-{chunk_id}"


def answer_payload(answer: Answer) -> dict[str, Any]:
    """Everything a client needs to show an answer; `answer_get` has loaded the relations."""
    question = answer.question
    retrieval = question.retrieval
    verification = getattr(answer, "verification", None)
    return {
        "question_id": question.pk,
        "answer_id": answer.pk,
        "question": question.text,
        "refused": retrieval.refused,
        "refusal_reason": retrieval.refusal_reason or None,
        "answer": answer.text,
        "error": answer.error or None,
        "generator": answer.generator,
        "model": answer.model or None,
        "sources": [
            {"article": hit.article.slug, "title": hit.article.title, "score": round(hit.score, 4)}
            for hit in retrieval.articles.all()
        ],
        "citations": [
            {
                "number": source.number,
                "article": source.chunk.article.slug,
                "title": source.chunk.article.title,
                "passage": source.chunk.text,
                "url": passage_url(
                    source.chunk.article.slug,
                    source.chunk.revision_id,
                    source.chunk_id,
                    current=source.chunk.is_current,
                ),
            }
            for source in answer.sources.all()
        ],
        "topics": [topic.slug for topic in retrieval.topics.all()],
        "themes": [theme.slug for theme in retrieval.themes.all()],
        "preflight": {
            "domain": question.preflight_domain,
            "risk": question.preflight_risk,
            "suggestion": question.preflight_suggestion,
        },
        "usage": {
            "input_tokens": answer.input_tokens,
            "output_tokens": answer.output_tokens,
            "cost_usd": str(answer.cost_usd),
            "latency_ms": answer.latency_ms,
        },
        "verification": {"status": verification.status if verification else None},
    }
