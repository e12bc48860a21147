"""Timing helpers every section shares: a call timed, p50/p95 of samples, medians over repeated runs."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def timed(fn: Callable[..., T], *args: Any) -> tuple[float, T]:
    """Milliseconds `fn(*args)` took, and what it returned."""
    began = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - began) * 1000, result


def percentiles(samples: Sequence[float], digits: int = 2) -> dict[str, float]:
    """p50 and p95 of millisecond timings (the nearest sample for p95), rounded to `digits`."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered), digits), "p95_ms": round(p95, digits)}


def median_of_runs(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run[key] for run in runs), 2) for key in runs[0]}


def p95_range(runs: Sequence[dict[str, float]]) -> list[float]:
    """Lowest and highest p95 of the runs: how far one run's figure can be trusted on a shared machine."""
    return [min(run["p95_ms"] for run in runs), max(run["p95_ms"] for run in runs)]


def cpu_seconds(pid: int, *, reaped: bool = False) -> float:
    """CPU time (user and system) used so far by process `pid` and its live children, from /proc; with `reaped`,
    also that of its children that have ended (a server's short-lived workers, counted once it has waited for
    them). 0.0 when there is no such process here."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # a process that ended meanwhile
        if stat.parent.name == str(pid):
            total += (int(fields[11]) + int(fields[12])) / ticks
            if reaped:
                total += (int(fields[13]) + int(fields[14])) / ticks
        elif fields[1] == str(pid):  # fields[1] is the parent's pid
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total
