"""The JSON shapes of answers, verdicts and health, shared by the API and the commands."""

from __future__ import annotations

from typing import Any

from garden.models import Answer
from verifier.checking import Checked
from verifier.health import Health
from verifier.models import Verification
from verifier.selectors import verdict_summary


def answer_payload(answer: Answer) -> dict[str, Any]:
    """Everything a client needs to show an answer; `answer_get` has loaded the relations."""
    question = answer.question
    retrieval = question.retrieval
    verification = getattr(answer, "verification", None)
    return {
        "question_id": question.pk,
        "answer_id": str(answer.public_id),
        "question": question.text,
        "refused": retrieval.refused,
        "refusal_reason": retrieval.refusal_reason or None,
        "answer": answer.text,
        "error": answer.error or None,
        "generator": answer.generator,
        "budget_held": answer.budget_held,
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
                "page": source.chunk.page,
                "cited_as": source.chunk.cited_as,
                "passage": source.chunk.text,
                "url": source.chunk.get_absolute_url(),
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
        "verification": {
            "status": verification.status if verification else None,
            "verdict": verification.verdict or None if verification else None,
            "risk_label": verification.risk_label or None if verification else None,
            "blocked": verification.blocked if verification else False,
        },
    }


def verification_payload(verification: Verification | None) -> dict[str, Any]:
    """The verdict on an answer; `verification_for_answer` has loaded claims and votes."""
    if verification is None:
        return {"status": None, "claims": []}
    summary = verdict_summary(verification)
    return {
        "status": verification.status,
        "error": verification.error or None,
        "verdict": verification.verdict or None,
        "risk_score": verification.risk_score,
        "risk_label": verification.risk_label or None,
        "delta_score": verification.delta_score,
        "confidence": verification.confidence,
        "compact": verification.compact or None,
        "judges": verification.judges,
        "flags": verification.flags,
        "local_only": verification.local_only,
        "disclosure": verification.disclosure or None,
        "input_tokens": verification.input_tokens,
        "output_tokens": verification.output_tokens,
        "cost_usd": str(verification.cost_usd),
        "counts": {status: count for status, _, count in summary.counts},
        "blocked": verification.blocked,
        "critics": [
            {
                "check": f.check_name,
                "severity": f.severity,
                "passed": f.passed,
                "message": f.message,
                "error": f.error or None,
                "latency_ms": f.latency_ms,
            }
            for f in verification.findings.all()
        ],
        "sources_used": summary.sources_used,
        "claims": [
            {
                "text": claim.text,
                "start": claim.start,
                "end": claim.end,
                "status": claim.status,
                "quote": claim.quote,
                "source_index": claim.source_number,
                "article": claim.chunk.article.slug if claim.chunk else None,
                "confidence": claim.confidence,
                "flags": list(claim.flags),
                "escalated": claim.escalated,
                "votes": [
                    {
                        "judge": v.judge,
                        "role": v.role,
                        "status": v.status,
                        "confidence": v.confidence,
                        "quote": v.quote,
                        "flags": list(v.flags),
                    }
                    for v in claim.votes.all()
                ],
            }
            for claim in summary.claims
            if claim.is_claim
        ],
    }


def checked_payload(checked: Checked, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """A text checked against the garden (`POST /api/check`, `check_text`)."""
    scored = checked.scored
    claims = [c for c in checked.claims if c.is_claim]
    return {
        "verdict": scored.verdict,
        "risk_score": scored.risk_score,
        "risk_label": scored.risk_label,
        "delta_score": scored.delta_score,
        "judge_available": checked.judge_available,
        "disclosure": checked.outcome.disclosure or None,
        "claims": [
            {
                "text": claim.text,
                "status": vote.status,
                "quote": vote.quote,
                "source_index": vote.source_index,
                "confidence": round(vote.confidence, 4),
                "flags": list(vote.flags),
            }
            for claim, vote in zip(claims, checked.outcome.finals, strict=True)
        ],
        "sources": sources,
    }


def health_payload(health: Health) -> dict[str, Any]:
    oldest = health.oldest_waiting
    return {
        "status": health.status,
        "database": "ok" if health.database else "down",
        "redis": "ok" if health.redis else "down",
        "workers_seen": len(health.workers),
        "waiting": health.waiting,
        "stuck": health.stuck,
        "oldest_waiting_seconds": round(oldest.total_seconds(), 1) if oldest is not None else None,
        "problems": health.problems,
        "garden": {
            "last_sync": health.sync.started_at.isoformat() if health.sync else None,
            "refused": health.sync.refused if health.sync else "",
            "failures": [{"path": path, "reason": reason} for path, reason in health.sync.failures]
            if health.sync
            else [],
        },
    }
