"""The Celery app with an embedding model that breaks on one marked passage, as a bad deploy or a damaged disk
would: `celery -A tests.faulty_embedding_worker:app worker`. While the file named by
GROUNDWORK_TEST_EMBED_FAULT exists, a batch holding a passage with `MARKER` fails (the file says `fail`) or
never finishes (`hang`); once it is gone, the worker embeds as any other.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from config.celery import app
from providers import embeddings

__all__ = ["MARKER", "app"]

MARKER = "The marked passage breaks the embedding model."
FAULT = "the embedding model's weights could not be read"

_embed = embeddings.embed


def _faulty_embed(texts: Sequence[str], **options: Any) -> npt.NDArray[np.float32]:
    fault = Path(os.environ.get("GROUNDWORK_TEST_EMBED_FAULT", "/nonexistent"))
    if fault.exists() and any(MARKER in text for text in texts):
        if fault.read_text() == "hang":
            time.sleep(3600)
        raise OSError(FAULT)  # not MemoryError, on which Celery stops the whole worker
    return _embed(texts, **options)


embeddings.embed = _faulty_embed
