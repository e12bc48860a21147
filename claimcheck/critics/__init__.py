"""The critics: fixed-severity rules run on every answer after it is given (see docs/architecture.md,
"Checking an answer"). A critic is not a check: "check" is fact-checking a given text (docs/glossary.md).

`run_critics` runs each critic in `CRITICS` and returns one `CriticResult` per critic, in order. A critic that
raises fails open: its result has `passed=True`, the error in `error`, and its fixed severity. Every result
carries the critic's latency. Pure Python: no Django.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from claimcheck.critics import citation_gate, constraints, fabricated_reference, safety
from claimcheck.critics.base import (
    ConstraintRules,
    Critic,
    CriticInput,
    CriticResult,
    Severity,
    SourcePassage,
)

__all__ = [
    "CRITICS",
    "ConstraintRules",
    "Critic",
    "CriticInput",
    "CriticResult",
    "Severity",
    "SourcePassage",
    "run_critics",
]

logger = logging.getLogger(__name__)

CRITICS: tuple[Critic, ...] = (
    fabricated_reference.CRITIC,
    citation_gate.CRITIC,
    safety.CRITIC,
    constraints.CRITIC,
)
CRITIC_FAILED_MESSAGE: Final = "The {critic} critic could not run, so it was skipped."


def run_critics(critic_input: CriticInput, critics: Sequence[Critic] | None = None) -> list[CriticResult]:
    """Run every critic (by default `CRITICS`) on the answer; a critic that raises is recorded and passes."""
    results = []
    for critic in CRITICS if critics is None else critics:
        started = time.perf_counter()
        try:
            result = critic(critic_input)
        except Exception as error:
            # Fail open: a broken critic must not block or hold up an answer; the error is kept for operators.
            logger.exception("critic %s failed", critic.name)
            result = CriticResult(
                critic=critic.name,
                severity=critic.severity,
                passed=True,
                message=CRITIC_FAILED_MESSAGE.format(critic=critic.name),
                details={},
                error=f"{type(error).__name__}: {error}",
            )
        latency_ms = (time.perf_counter() - started) * 1000
        results.append(replace(result, critic=critic.name, severity=critic.severity, latency_ms=latency_ms))
    return results
