"""The JSON of a checked text and of health, for the API and the commands (an answer's: `dashboard.shapes`)."""

from __future__ import annotations

from typing import Any

from claimcheck.quote_gate import quote_passed
from claimcheck.verdict import compact_line
from garden.models import Passage
from verifier.checking import Checked
from verifier.health import SYNC_REFUSED, SYNC_REFUSED_UNNAMED, Health


def check_sources(passages: list[Passage]) -> list[dict[str, Any]]:
    """The passages a text was checked against, numbered as its claims' `source_index` (`POST /api/check`)."""
    return [
        {
            "number": n,
            "article": c.article.slug,
            "title": c.article.title,
            "page": c.page,
            "cited_as": c.cited_as,
            "url": c.get_absolute_url(),
        }
        for n, c in enumerate(passages, start=1)
    ]


def checked_payload(
    checked: Checked, sources: list[dict[str, Any]], *, rejected_quotes: bool = False
) -> dict[str, Any]:
    """A text checked against the garden (`POST /api/check`), with a quote the quote gate turned down only for
    editors and operators (`rejected_quotes`, as `dashboard.shapes.verdicts.verdict_shape`)."""
    scored = checked.scored
    claims = [c for c in checked.claims if c.is_claim]
    return {
        "verdict": scored.verdict,
        "risk_score": scored.risk_score,
        "risk_label": scored.risk_label,
        "delta_score": scored.delta_score,
        "judge_available": checked.judge_available,
        "disclosure": checked.outcome.disclosure or None,
        "compact": compact_line(
            risk_label=scored.risk_label,
            risk_score=scored.risk_score,
            judges=len(checked.outcome.judges),
            local_only=checked.outcome.local_only,
            flags=sum(len(vote.flags) for vote in checked.outcome.finals),
        ),
        "claims": [
            {
                "text": claim.text,
                "status": vote.status,
                "quote": vote.quote if rejected_quotes or quote_passed(vote.flags) else "",
                "source_index": vote.source_index,
                "confidence": round(vote.confidence, 4),
                "flags": list(vote.flags),
            }
            for claim, vote in zip(claims, checked.outcome.finals, strict=True)
        ],
        "sources": sources,
    }


def health_payload(health: Health, *, operator: bool) -> dict[str, Any]:
    """`/api/health`. Only an `operator` reads where the garden is and which notes failed: a folder's path
    tells a stranger about the server, and a note's file name may itself be private."""
    oldest = health.oldest_waiting
    refused = health.sync.refused if health.sync else ""
    problems = health.problems
    if refused and not operator:
        named = SYNC_REFUSED.format(reason=refused)
        problems = [SYNC_REFUSED_UNNAMED if problem == named else problem for problem in problems]
        refused = SYNC_REFUSED_UNNAMED
    failures = health.sync.failures if health.sync and operator else []
    return {
        "status": health.status,
        "database": "ok" if health.database else "down",
        "redis": "ok" if health.redis else "down",
        "workers_seen": len(health.workers),
        "waiting": health.waiting,
        "stuck": health.stuck,
        "oldest_waiting_seconds": round(oldest.total_seconds(), 1) if oldest is not None else None,
        "problems": problems,
        "garden": {
            "last_sync": health.sync.started_at.isoformat() if health.sync else None,
            "refused": refused,
            "failures": [{"path": path, "reason": reason} for path, reason in failures],
        },
    }
