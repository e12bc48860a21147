"""Claude off most of the web threads: at most `settings.WEB_CLAUDE_SLOTS` threads of a web process wait on
Claude at once (an ask answered by Claude, a reader's fact-check judged by it); one more is told at once that
Claude is busy, instead of queueing behind them while pages and verdict polls wait for a free thread.

The slots are per process, as gunicorn's threads are: each process keeps its other threads for pages.
"""

from __future__ import annotations

import threading
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


class ClaudeSlot:
    """One of this process's slots for waiting on Claude, held while a `with` block runs; raises `ClaudeBusy`
    at once, without waiting, when none is free. Used again, it takes a slot again: a question's calls (a
    follow-up's condensing, then its answer) each wait inside one."""

    def __init__(self) -> None:
        self._slots = _slots(settings.WEB_CLAUDE_SLOTS)

    def __enter__(self) -> None:
        if not self._slots.acquire(blocking=False):
            raise ClaudeBusy

    def __exit__(self, *exc: object) -> None:
        self._slots.release()


def claude_slot() -> ClaudeSlot:
    """The slot a request's Claude calls wait in (`ClaudeSlot`)."""
    return ClaudeSlot()
