"""Embeddings from a model the team serves over the OpenAI API (`EMBEDDING_BACKEND=openai`): `POST /v1/embeddings`
as Ollama, vLLM, llama.cpp's server and Hugging Face's text-embeddings-inference serve it, through the official
`openai` SDK with the served chat model's endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, its timeout and retries).

`OPENAI_EMBEDDING_MODEL` names the model and `EMBEDDING_DIMENSIONS` the size of its vectors; every reply is
checked against both, and whatever goes wrong (the server down, 429 or 5xx after the SDK's retries, a body that is
not JSON, vectors missing or of another size) raises `EmbeddingError` with a message saying which server and model
failed and how. Plain Python: settings are read through `providers.embeddings.setting`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib import import_module
from typing import Final

import numpy as np
import numpy.typing as npt

from providers.openai.config import NO_KEY, OpenAIConfig

# Texts per request: servers cap a batch (text-embeddings-inference at 32 by default, Ollama and vLLM higher).
BATCH_SIZE: Final = 32
# What `Passage.embedded_by` holds at most; a longer model name is shortened with a digest of the whole.
NAME_MAX_CHARS: Final = 40
PREFIX: Final = "openai:"

NO_MODEL: Final = "EMBEDDING_BACKEND=openai: set OPENAI_EMBEDDING_MODEL to the served embedding model's name."
FAILED: Final = "The served embedding model {model} at {where} failed: {reason}"
WRONG_SIZE: Final = (
    "the server sent vectors of {got} numbers, and EMBEDDING_DIMENSIONS is {expected}: set it to the model's size "
    "and switch the garden over (python manage.py reembed_garden)"
)
WRONG_COUNT: Final = "the server sent {got} vectors for {expected} texts"
NOT_VECTORS: Final = "the reply holds no list of vectors of numbers: {detail}"


class EmbeddingError(Exception):
    """The served embedding model could not embed the texts; the message says which, where and why."""


def _setting(name: str) -> str:
    from providers.embeddings import setting

    return setting(name, "")


def model_name() -> str:
    name = _setting("OPENAI_EMBEDDING_MODEL")
    if not name:
        raise EmbeddingError(NO_MODEL)
    return name


def dimensions() -> int:
    """The size of the served model's vectors (`EMBEDDING_DIMENSIONS`)."""
    from providers.embeddings import DIMENSIONS, setting

    return int(setting("EMBEDDING_DIMENSIONS", str(DIMENSIONS)))


def embedder_name() -> str:
    """What `Passage.embedded_by` records for the served model: "openai:MODEL@DIMENSIONS". Another model, or the
    same at another size, is another embedder, whose vectors are never compared with these."""
    name = f"{PREFIX}{model_name()}@{dimensions()}"
    if len(name) <= NAME_MAX_CHARS:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: NAME_MAX_CHARS - len(digest) - 1]}~{digest}"


def config() -> OpenAIConfig:
    """The served models' endpoint, as the settings name it (`providers.openai.config.openai_config`, without
    the prices: embedding is not booked in the ledger)."""
    from providers.embeddings import setting

    return OpenAIConfig(
        api_key=_setting("OPENAI_API_KEY") or NO_KEY,
        base_url=_setting("OPENAI_BASE_URL") or None,
        timeout_seconds=float(setting("OPENAI_TIMEOUT_SECONDS", "60")),
        max_retries=int(setting("OPENAI_MAX_RETRIES", "2")),
    )


def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Unit-length vectors of the texts by the served model, one row per text, BATCH_SIZE texts a request;
    EmbeddingError when the server fails or sends anything but one vector of EMBEDDING_DIMENSIONS per text."""
    model, size, endpoint = model_name(), dimensions(), config()
    vectors = np.zeros((len(texts), size), dtype=np.float32)
    for start in range(0, len(texts), BATCH_SIZE):
        batch = list(texts[start : start + BATCH_SIZE])
        try:
            vectors[start : start + len(batch)] = _batch(endpoint, model, size, batch)
        except EmbeddingError as error:
            where = endpoint.base_url or "OpenAI"
            raise EmbeddingError(FAILED.format(model=model, where=where, reason=error)) from error
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def load() -> None:
    """Import the SDK now (`providers.embeddings.load`, as a server starts), not at the first request."""
    import_module("providers.openai.client")


def _batch(endpoint: OpenAIConfig, model: str, size: int, texts: list[str]) -> npt.NDArray[np.float32]:
    # The SDK at the first request, or at `load()`: every Django process imports this module (through the
    # passages' model) and most never call a served model, while the SDKs it would bring in take 1.5 s to import.
    import openai

    from providers.openai.client import client_for, to_error

    try:
        reply = client_for(endpoint).embeddings.create(model=model, input=texts, encoding_format="float")
    except (openai.OpenAIError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EmbeddingError(to_error(exc, endpoint).detail) from exc
    data = getattr(reply, "data", None)
    if not isinstance(data, list):
        raise EmbeddingError(NOT_VECTORS.format(detail=repr(reply)[:300]))
    if len(data) != len(texts):
        raise EmbeddingError(WRONG_COUNT.format(got=len(data), expected=len(texts)))
    # Servers send the vectors in the order of the texts, each with its index: read them by it.
    ordered = sorted(data, key=lambda item: getattr(item, "index", 0) or 0)
    try:
        matrix = np.asarray([item.embedding for item in ordered], dtype=np.float32)
    except (TypeError, ValueError, AttributeError) as exc:
        raise EmbeddingError(NOT_VECTORS.format(detail=f"{type(exc).__name__}: {exc}")) from exc
    if matrix.ndim != 2 or matrix.shape[1] != size:
        got = matrix.shape[1] if matrix.ndim == 2 else "a ragged list of"
        raise EmbeddingError(WRONG_SIZE.format(got=got, expected=size))
    if not np.isfinite(matrix).all():
        raise EmbeddingError(NOT_VECTORS.format(detail="a vector holds NaN or infinity"))
    return matrix
