"""Encoding text with the shared MiniLM: one transformer pass gives a text's sentence embedding and the
contextual embedding of each of its words, kept with the words, stems and content words in a `Text`."""

from __future__ import annotations

import copy
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from garden import embeddings
from garden.embeddings import EmbeddingBackend
from verifier.judges.local.lexicon import STOPWORDS, split_words, stem

# The width of MiniLM's sentence and word embeddings.
EMBEDDING_SIZE: Final = 384
# Texts per transformer pass; they are sorted by length first, so little of a batch is padding.
_BATCH_SIZE: Final = 32
# Word pieces the transformer reads per text: a source piece of at most 60 words usually fits; the rest is cut.
_MAX_TOKENS: Final = 128


@dataclass(frozen=True)
class Text:
    """A piece of text analysed once: words, stems, numbers, names and embeddings."""

    text: str
    words: tuple[str, ...]
    stems: tuple[str, ...]
    content: tuple[int, ...]  # indices of content words (not stopwords, not punctuation)
    vector: npt.NDArray[np.float32]  # unit sentence embedding (384,)
    word_vectors: npt.NDArray[np.float32]  # unit contextual embeddings of `words` (n, 384)


_encode_lock = threading.Lock()


HiddenStates = Callable[[Any], npt.NDArray[np.float32]]


@lru_cache(maxsize=4)
def _encoder(backend: EmbeddingBackend) -> HiddenStates:
    """The MiniLM transformer behind `garden.embeddings` for `backend` (loaded once): word-piece ids in, the
    last hidden states out.

    Under torch, where the CPU has native bfloat16 the judge runs its own bfloat16 copy: about 3x faster on one
    thread, with embeddings within 1e-4 cosine of float32 (the shared model itself is left untouched). Under
    ONNX it shares the embedding backend's session.
    """
    if backend is not EmbeddingBackend.TORCH:
        return embeddings.onnx_session(backend).hidden_states

    import torch

    transformer: Any = embeddings.model()[0].auto_model
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


def judge_backend() -> EmbeddingBackend:
    """The backend the judge embeds with: JUDGE_EMBEDDING_BACKEND (its features were fitted on torch's)."""
    name = embeddings.setting("JUDGE_EMBEDDING_BACKEND", EmbeddingBackend.TORCH)
    return embeddings.backend_named(name, "JUDGE_EMBEDDING_BACKEND")


def _ascii_digits(text: str) -> str:
    """`text` with the digits of other scripts (fullwidth, Arabic-Indic, ...) as ASCII ones, so "１９９０" is
    1990. One character stays one character, so spans into `text` still hold."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def encode(texts: Sequence[str]) -> list[Text]:
    """Analyse texts: one transformer pass gives the sentence embedding and the per-word embeddings."""
    texts = [_ascii_digits(text) for text in texts]
    hidden_states = _encoder(judge_backend())
    results: list[Text | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for batch_start in range(0, len(order), _BATCH_SIZE):
        batch = order[batch_start : batch_start + _BATCH_SIZE]
        batch_texts = [texts[i] for i in batch]
        with _encode_lock:
            encoded = embeddings.tokenize(
                batch_texts,
                padding=True,
                truncation=True,
                max_length=_MAX_TOKENS,
                return_offsets_mapping=True,
            )
            offsets = encoded.pop("offset_mapping")
            hidden = hidden_states(encoded)
        mask = encoded["attention_mask"].astype(np.float32)
        pooled = (hidden * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-9)
        for row, index in enumerate(batch):
            results[index] = _analyse(texts[index], pooled[row], hidden[row], offsets[row], mask[row])
    return [r for r in results if r is not None]


def _analyse(
    text: str,
    vector: npt.NDArray[np.float32],
    hidden: npt.NDArray[np.float32],
    offsets: npt.NDArray[np.int64],
    mask: npt.NDArray[np.float32],
) -> Text:
    """Map word-piece embeddings onto the regex words of `text` (mean of the pieces inside each word)."""
    words = split_words(text)
    piece_starts = offsets[:, 0]
    piece_ends = offsets[:, 1]
    valid = (mask > 0) & (piece_ends > piece_starts)
    word_vectors = np.zeros((len(words), hidden.shape[1]), dtype=np.float32)
    for i, (_, start, end) in enumerate(words):
        inside = valid & (piece_starts < end) & (piece_ends > start)
        if inside.any():
            word_vectors[i] = hidden[inside].mean(0)
        else:
            word_vectors[i] = vector  # truncated away: fall back to the sentence embedding
    word_vectors /= np.maximum(np.linalg.norm(word_vectors, axis=1, keepdims=True), 1e-9)
    surface = tuple(w for w, _, _ in words)
    stems = tuple(stem(w) for w in surface)
    content = tuple(
        i for i, w in enumerate(surface) if w.lower() not in STOPWORDS and (len(w) > 1 or w.isdigit())
    )
    return Text(text, surface, stems, content, vector.astype(np.float32), word_vectors)
