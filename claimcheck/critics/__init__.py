"""The critic checks: fixed-severity checks run on every answer after it is given (see docs/architecture.md,
"Checking an answer").

`run_critics` runs each check in `CHECKS` and returns one `CriticResult` per check, in order. A check that
raises fails open: its result has `passed=True`, the error in `error`, and its fixed severity. Every result
carries the check's latency. Pure Python: no Django.
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
    "CHECKS",
    "ConstraintRules",
    "Critic",
    "CriticInput",
    "CriticResult",
    "Severity",
    "SourcePassage",
    "run_critics",
]

logger = logging.getLogger(__name__)

CHECKS: tuple[Critic, ...] = (
    fabricated_reference.CHECK,
    citation_gate.CHECK,
    safety.CHECK,
    constraints.CHECK,
)
CHECK_FAILED_MESSAGE: Final = "The {check} check could not run, so it was skipped."


def run_critics(critic_input: CriticInput, checks: Sequence[Critic] | None = None) -> list[CriticResult]:
    """Run every check (by default `CHECKS`) on the answer; a check that raises is recorded and passes."""
    results = []
    for check in CHECKS if checks is None else checks:
        started = time.perf_counter()
        try:
            result = check(critic_input)
        except Exception as error:
            # Fail open: a broken check must not block or hold up an answer; the error is kept for operators.
            logger.exception("critic check %s failed", check.name)
            result = CriticResult(
                check=check.name,
                severity=check.severity,
                passed=True,
                message=CHECK_FAILED_MESSAGE.format(check=check.name),
                details={},
                error=f"{type(error).__name__}: {error}",
            )
        latency_ms = (time.perf_counter() - started) * 1000
        results.append(replace(result, check=check.name, severity=check.severity, latency_ms=latency_ms))
    return results
