"""The Celery app with a slow embedding-model load, as on a machine whose disk cache does not yet hold torch and
the model: `celery -A tests.slow_model_worker:app worker`. Every process that loads the model waits
`GROUNDWORK_TEST_MODEL_LOAD_SECONDS` (default 10) first, longer than the 4 s a prefork pool gives a new process to
report that it is up.
"""

from __future__ import annotations

import os
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from config.celery import app
from providers import embeddings

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["app"]

_load = embeddings._model


@lru_cache(maxsize=1)
def _slow_load() -> SentenceTransformer:
    time.sleep(float(os.environ.get("GROUNDWORK_TEST_MODEL_LOAD_SECONDS", "10")))
    return _load()


embeddings._model = _slow_load
