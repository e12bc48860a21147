"""Fixtures of the pages' and the API's tests."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from django.core.cache import cache, caches
from django.core.management import call_command

from dashboard import ratelimit
from garden.models import Article
from tests.conftest import SAMPLE_IMPORT


@pytest.fixture
def fresh_counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Rate-limit counts start at zero, in one counting window for the whole test: django-ratelimit's windows
    end at fixed times, and a test slowed by a loaded machine could otherwise cross one's end and find its counts
    started afresh."""
    monkeypatch.setattr(ratelimit, "_shared_down_until", 0.0)
    now = time.time()
    monkeypatch.setattr("django_ratelimit.core.time", SimpleNamespace(time=lambda: now))
    cache.clear()
    caches["ratelimit"].clear()
    yield
    cache.clear()
    caches["ratelimit"].clear()


@pytest.fixture
def sample_garden() -> None:
    """The sample garden, committed for a server in another process to read (an earlier transactional test may
    have emptied the database)."""
    if not Article.objects.filter(title="Cold Knap Tunnel").exists():
        call_command("import_garden", *SAMPLE_IMPORT, "--no-progress", verbosity=0)
