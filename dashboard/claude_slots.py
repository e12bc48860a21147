"""Claude off most of the web threads: at most `settings.WEB_CLAUDE_SLOTS` threads of a web process wait on
Claude at once (an ask answered by Claude, a reader's fact-check judged by it); one more is told at once that
Claude is busy, instead of queueing behind them while pages and verdict polls wait for a free thread.

The slots are per process, as gunicorn's threads are: each process keeps its other threads for pages.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from django.conf import settings

CLAUDE_BUSY = "Claude is busy with other questions right now; please try again in a few seconds."
# Seconds a client is asked to wait: about what one answer from Claude takes, so a slot has likely come free.
CLAUDE_BUSY_RETRY_AFTER = 10


class ClaudeBusy(Exception):
    """Every slot for waiting on Claude in this process is taken: nothing was called, nothing stored."""


@lru_cache(maxsize=4)
def _slots(size: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(size)


@contextmanager
def claude_slot() -> Iterator[None]:
    """Hold one of this process's slots for waiting on Claude while the block runs; raises `ClaudeBusy`
    at once, without waiting, when none is free."""
    slots = _slots(settings.WEB_CLAUDE_SLOTS)
    if not slots.acquire(blocking=False):
        raise ClaudeBusy
    try:
        yield
    finally:
        slots.release()
