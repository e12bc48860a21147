"""The Celery app with a slow model load, as on a machine whose disk cache does not yet hold torch and the model:
`celery -A tests.slow_model_worker:app worker`. Every process that loads the torch model (the judge's transformer,
or the whole embedding model) waits `GROUNDWORK_TEST_MODEL_LOAD_SECONDS` (default 10) first, longer than the 4 s a
prefork pool gives a new process to report that it is up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import _lru_cache_wrapper, lru_cache
from typing import TypeVar

from config.celery import app
from providers import embeddings

__all__ = ["app"]

T = TypeVar("T")


def _slowed(load: Callable[[], T]) -> _lru_cache_wrapper[T]:
    @lru_cache(maxsize=1)
    def slow_load() -> T:
        time.sleep(float(os.environ.get("GROUNDWORK_TEST_MODEL_LOAD_SECONDS", "10")))
        return load()

    return slow_load


embeddings._model = _slowed(embeddings._model)
embeddings._transformer = _slowed(embeddings._transformer)
