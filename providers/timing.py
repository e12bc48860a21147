"""Where a request's time goes: named phases, each timed exclusive of the phases nested in it.

A request opens `recording()`; code on its path marks its work with `phase("retrieval")` and the like. Outside
a recording (a Celery task, a test), `phase` only costs a context-variable lookup. The web layer sends the
figures as a `Server-Timing` header, which `make load` reads to say where an ask's time went.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

OTHER = "other"  # time inside the recording but in no named phase


@dataclass
class Timings:
    """Milliseconds per phase, exclusive: an embedding inside retrieval counts as embedding only."""

    phases: dict[str, float] = field(default_factory=dict)
    total_ms: float = 0.0
    _stack: list[list[float]] = field(default_factory=list)  # [began, nested seconds] per open phase

    def add(self, name: str, seconds: float) -> None:
        self.phases[name] = self.phases.get(name, 0.0) + seconds * 1000

    def header(self) -> str:
        """The `Server-Timing` value: each phase, then `total`."""
        named = sum(self.phases.values())
        phases = {**self.phases, OTHER: max(0.0, self.total_ms - named), "total": self.total_ms}
        return ", ".join(f"{name};dur={ms:.1f}" for name, ms in phases.items())


_current: ContextVar[Timings | None] = ContextVar("timings", default=None)


@contextmanager
def recording() -> Iterator[Timings]:
    """Record the phases of the work done inside the block (in this thread or task)."""
    timings = Timings()
    token = _current.set(timings)
    began = time.perf_counter()
    try:
        yield timings
    finally:
        timings.total_ms = (time.perf_counter() - began) * 1000
        _current.reset(token)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Count the block's time to `name`, less the time of phases nested in it."""
    timings = _current.get()
    if timings is None:
        yield
        return
    frame = [time.perf_counter(), 0.0]
    timings._stack.append(frame)
    try:
        yield
    finally:
        timings._stack.pop()
        spent = time.perf_counter() - frame[0]
        timings.add(name, spent - frame[1])
        if timings._stack:
            timings._stack[-1][1] += spent


def parse_header(value: str) -> dict[str, float]:
    """Milliseconds per phase from a `Server-Timing` header value (the inverse of `Timings.header`)."""
    phases: dict[str, float] = {}
    for entry in value.split(","):
        name, _, params = entry.strip().partition(";")
        for param in params.split(";"):
            key, _, number = param.strip().partition("=")
            if key == "dur" and name:
                phases[name] = phases.get(name, 0.0) + float(number)
    return phases
