"""Vectors of recurring texts (source sentences), shared by every process through the cache (Redis).

Each web process remembers what it embedded; through this cache each also finds what its siblings, the last
deployment's processes or another machine embedded, so a garden's sentences are embedded about once, not once
per process. The key names the backend and its export, so one backend's vectors never serve another. The cache
is an aid only: when it is away or full, texts are embedded here as before.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from django.core.cache import cache

from providers.embeddings import EmbeddingBackend, embedder

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 30 * 24 * 3600  # a sentence still in the garden is read again long before this
# After the cache fails to answer, it is left alone this long: each try could cost a connection timeout.
RETRY_AFTER_SECONDS = 30.0
_away_until = 0.0


def _available() -> bool:
    return time.monotonic() >= _away_until


def _away(doing: str) -> None:
    global _away_until
    _away_until = time.monotonic() + RETRY_AFTER_SECONDS
    logger.warning(
        "the shared embedding cache failed while %s; embedding here for %.0f s",
        doing,
        RETRY_AFTER_SECONDS,
        exc_info=True,
    )


def _key(backend: str, text: str) -> str:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"embedding:{embedder(EmbeddingBackend(backend))}:{digest}"


def vectors_get(backend: str, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
    """The vectors the cache has for these texts, by text."""
    if not texts or not _available():
        return {}
    keys = {_key(backend, text): text for text in texts}
    try:
        found = cache.get_many(list(keys))
    except Exception:
        _away("reading")
        return {}
    return {keys[key]: np.frombuffer(raw, dtype=np.float32) for key, raw in found.items()}


def vectors_put(backend: str, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
    """Share freshly embedded vectors (float32 bytes)."""
    if not vectors or not _available():
        return
    entries = {_key(backend, text): vector.astype(np.float32).tobytes() for text, vector in vectors.items()}
    try:
        cache.set_many(entries, timeout=TIMEOUT_SECONDS)
    except Exception:
        _away("writing")
