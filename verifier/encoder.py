"""The judge's MiniLM: the garden's embedding model as the engine's `Encoder`, on the backend the judge's
features were fitted with (`JUDGE_EMBEDDING_BACKEND`). Plain Python: settings are read, when Django is set up,
through `providers.embeddings.setting`, so `make eval` and the engine's tests use it without Django."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from claimcheck.judges.local.encoding import Pieces, encoder_install
from providers import embeddings
from providers.embeddings import EmbeddingBackend

HiddenStates = Callable[[Any], npt.NDArray[np.float32]]


def judge_backend() -> EmbeddingBackend:
    """The backend the judge embeds with: JUDGE_EMBEDDING_BACKEND (its features were fitted on torch's)."""
    name = embeddings.setting("JUDGE_EMBEDDING_BACKEND", EmbeddingBackend.TORCH)
    return embeddings.backend_named(name, "JUDGE_EMBEDDING_BACKEND")


@lru_cache(maxsize=4)
def _transformer(backend: EmbeddingBackend) -> HiddenStates:
    """The MiniLM transformer behind `providers.embeddings` for `backend` (loaded once): word-piece ids in, the
    last hidden states out.

    Under torch, where the CPU has native bfloat16 the judge runs its own bfloat16 copy: faster on one thread,
    with embeddings all but those of float32 (the shared model itself is left untouched). Under ONNX it shares
    the embedding backend's session.
    """
    if backend is not EmbeddingBackend.TORCH:
        return embeddings.onnx_session(backend).hidden_states

    import torch

    transformer: Any = embeddings.transformer()
    try:
        native_bf16 = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native_bf16 = False
    if native_bf16:
        transformer = copy.deepcopy(transformer).to(torch.bfloat16).eval()

    def hidden_states(encoded: Any) -> npt.NDArray[np.float32]:
        inputs = {name: torch.from_numpy(np.asarray(encoded[name], dtype=np.int64)) for name in encoded}
        with torch.inference_mode():
            return transformer(**inputs).last_hidden_state.float().numpy()

    return hidden_states


def judge_load(*, onnx_sessions: bool = True) -> None:
    """Load the judge's tokenizer and transformer now (before serving, before forking), not at its first claim;
    under ONNX, without `onnx_sessions` the tokenizer alone (see `providers.embeddings.load`)."""
    backend = judge_backend()
    embeddings.tokenizer()
    if backend is EmbeddingBackend.TORCH or onnx_sessions:
        _transformer(backend)


class JudgeEncoder:
    """The engine's `Encoder`: the backend is read on each call, so a test or the benchmark can switch it."""

    @property
    def name(self) -> str:
        return str(judge_backend())

    def pieces(self, texts: Sequence[str], max_tokens: int) -> Pieces:
        encoded = embeddings.tokenize(
            texts, padding=True, truncation=True, max_length=max_tokens, return_offsets_mapping=True
        )
        offsets = encoded.pop("offset_mapping")
        hidden = _transformer(judge_backend())(encoded)
        return Pieces(hidden=hidden, mask=encoded["attention_mask"], offsets=offsets)


def encoder_use() -> None:
    """Have the engine's local judge read text with the garden's MiniLM in this process."""
    encoder_install(JudgeEncoder())
