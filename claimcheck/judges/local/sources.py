"""Prepared sources: a source cut into sentence pieces (verbatim spans), each piece encoded, with the
source-wide word, stem and number sets; recent sources are kept, as an article is judged against many answers."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from claimcheck.claims import split_sentences
from claimcheck.judges.local.clauses import Clause, lowercase_written, source_clauses
from claimcheck.judges.local.encoding import EMBEDDING_SIZE, Text, encode, encoder
from claimcheck.judges.local.figures import number_value

# A longer sentence is cut into pieces, so that a piece is about one thing and its quote stays readable.
_MAX_PIECE_WORDS: Final = 60


@dataclass(frozen=True)
class Prepared:
    """A source split into sentence pieces (verbatim spans) with their analyses and source-wide sets."""

    text: str
    spans: tuple[tuple[int, int], ...]
    pieces: tuple[Text, ...]
    vectors: npt.NDArray[np.float32]  # (n_pieces, 384)
    window_vectors: npt.NDArray[np.float32]  # unit mean of each piece with the next
    stems: frozenset[str]
    lower_words: frozenset[str]
    numbers: frozenset[str]
    lowercase: frozenset[
        str
    ]  # the words written in lower case (a capitalised word never so is likely a name)
    clauses: tuple[Clause, ...]  # every piece's clauses, in order, with their subjects and topics

    def quote(self, piece: int) -> str:
        """The verbatim text of one piece."""
        start, end = self.spans[piece]
        return self.text[start:end]


def _piece_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a source, long sentences cut at commas (or words) into pieces of ~60 words."""
    spans: list[tuple[int, int]] = []
    for start, end in split_sentences(text):
        words = list(re.finditer(r"\S+", text[start:end]))
        if len(words) <= _MAX_PIECE_WORDS:
            spans.append((start, end))
            continue
        piece_start = 0
        count = 0
        for i, word in enumerate(words):
            count += 1
            at_comma = word.group(0).endswith((",", ";", ":"))
            if (
                (count >= _MAX_PIECE_WORDS // 2 and at_comma)
                or count >= _MAX_PIECE_WORDS
                or i == len(words) - 1
            ):
                spans.append((start + words[piece_start].start(), start + word.end()))
                piece_start = i + 1
                count = 0
    return spans or [(0, len(text))]


# By the judge's encoder (its model and backend) and the text: another backend gives other embeddings.
_prepared_cache: OrderedDict[tuple[str, str], Prepared] = OrderedDict()
_prepared_lock = threading.Lock()
# Sources kept: the passages of many recent answers (an answer has about eight), with memory bounded.
_PREPARED_CACHE_SIZE: Final = 256


def prepare_sources(texts: Sequence[str]) -> list[Prepared]:
    """Prepared sources, reusing recent ones (articles are judged against many answers).

    What this call prepares or finds is held here until it returns: the cache may drop it meanwhile (when one
    call brings more sources than it keeps, or another thread fills it)."""
    backend = encoder().name
    found: dict[str, Prepared] = {}
    with _prepared_lock:
        for text in dict.fromkeys(texts):
            kept = _prepared_cache.get((backend, text))
            if kept is not None:
                _prepared_cache.move_to_end((backend, text))
                found[text] = kept
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        all_spans = [_piece_spans(t) if t.strip() else [] for t in missing]
        flat = [t[s:e] for t, spans in zip(missing, all_spans, strict=True) for s, e in spans]
        analysed = encode(flat)
        position = 0
        for text, spans in zip(missing, all_spans, strict=True):
            pieces = tuple(analysed[position : position + len(spans)])
            position += len(spans)
            found[text] = _build_prepared(text, tuple(spans), pieces)
            with _prepared_lock:
                _prepared_cache[backend, text] = found[text]
                while len(_prepared_cache) > _PREPARED_CACHE_SIZE:
                    _prepared_cache.popitem(last=False)
    return [found[t] for t in texts]


def forget_prepared_sources() -> None:
    """Drop every kept source, so the next judgement prepares its sources afresh (timing a cold start)."""
    with _prepared_lock:
        _prepared_cache.clear()


def _build_prepared(text: str, spans: tuple[tuple[int, int], ...], pieces: tuple[Text, ...]) -> Prepared:
    """Stack the pieces' embeddings and gather the source-wide word, stem and number sets."""
    vectors = (
        np.stack([p.vector for p in pieces]) if pieces else np.zeros((0, EMBEDDING_SIZE), dtype=np.float32)
    )
    windows = vectors.copy()
    if len(vectors) > 1:
        windows[:-1] = vectors[:-1] + vectors[1:]
        windows /= np.maximum(np.linalg.norm(windows, axis=1, keepdims=True), 1e-9)
    stems = frozenset(s for p in pieces for s in p.stems)
    lower = frozenset(w.lower() for p in pieces for w in p.words)
    numbers = frozenset(v for p in pieces for w in p.words if (v := number_value(w)) is not None)
    lowercase = lowercase_written([w for p in pieces for w in p.words])
    return Prepared(
        text,
        spans,
        pieces,
        vectors,
        windows,
        stems,
        lower,
        numbers,
        lowercase,
        source_clauses(pieces, lowercase),
    )
