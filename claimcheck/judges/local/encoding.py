"""Encoding text with the shared MiniLM: one transformer pass gives a text's sentence embedding and the
contextual embedding of each of its words, kept with the words, stems and content words in a `Text`."""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

from claimcheck.judges.local.lexicon import STOPWORDS, split_words, stem

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


class Encoder(Protocol):
    """The MiniLM the judge reads text with (the verifier hands in the garden's: `verifier.encoder`)."""

    @property
    def name(self) -> str:
        """Names the model and its backend: another backend gives other embeddings, so caches key on it."""
        ...

    def pieces(self, texts: Sequence[str], max_tokens: int) -> Pieces:
        """One transformer pass over `texts`, each cut to `max_tokens` word pieces and padded to the longest."""
        ...


@dataclass(frozen=True)
class Pieces:
    """The word pieces of a batch of texts: the last hidden states (texts, pieces, 384), the attention mask
    (texts, pieces) and each piece's character span in its text (texts, pieces, 2)."""

    hidden: npt.NDArray[np.float32]
    mask: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]


NO_ENCODER: Final = "No encoder installed: call claimcheck.judges.local.encoder_install() first."

_installed: Encoder | None = None
_encode_lock = threading.Lock()


def encoder_install(chosen: Encoder) -> None:
    """Read text with `chosen` from now on, in this process (the verifier installs the garden's at start-up)."""
    global _installed
    _installed = chosen


def encoder() -> Encoder:
    """The installed encoder; raises RuntimeError when none is."""
    if _installed is None:
        raise RuntimeError(NO_ENCODER)
    return _installed


def _ascii_digits(text: str) -> str:
    """`text` with the digits of other scripts (fullwidth, Arabic-Indic, ...) as ASCII ones, so "１９９０" is
    1990. One character stays one character, so spans into `text` still hold."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in text)


def encode(texts: Sequence[str]) -> list[Text]:
    """Analyse texts: one transformer pass gives the sentence embedding and the per-word embeddings."""
    texts = [_ascii_digits(text) for text in texts]
    reader = encoder()
    results: list[Text | None] = [None] * len(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for batch_start in range(0, len(order), _BATCH_SIZE):
        batch = order[batch_start : batch_start + _BATCH_SIZE]
        batch_texts = [texts[i] for i in batch]
        with _encode_lock:
            pieces = reader.pieces(batch_texts, _MAX_TOKENS)
        hidden, offsets = pieces.hidden, pieces.offsets
        mask = pieces.mask.astype(np.float32)
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
