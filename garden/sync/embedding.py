"""The vectors of a group of notes: reused for passages an edit left alone, encoded for the rest."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from garden import embeddings
from garden.models import Chunk
from garden.services import embedding_input
from garden.sync.writing import Pending


def _previous_vectors(pending: Sequence[Pending]) -> dict[tuple[str, str], list[float]]:
    """The vectors of the current chunks of the notes being revised, by (slug, embedding input): an edit
    re-embeds only the passages it changed."""
    rows = Chunk.objects.filter(
        is_current=True, article__slug__in=[p.parsed.slug for p in pending]
    ).values_list("article__slug", "revision__title", "text", "embedding")
    return {(slug, embedding_input(title, text)): list(vector) for slug, title, text, vector in rows}


@dataclass
class Embedding:
    """One group's vectors: those its notes' unchanged passages already have, and the texts still to encode."""

    group: Sequence[Pending]
    vectors: list[list[float]]
    missing: list[int]  # positions still to encode, shortest text first
    texts: list[str]

    @classmethod
    def plan(cls, group: Sequence[Pending]) -> Embedding:
        keys = [
            (p.parsed.slug, embedding_input(p.parsed.title, p.parsed.body[a:b]))
            for p in group
            for a, b in p.spans
        ]
        known = _previous_vectors(group)
        vectors = [known.get(key, []) for key in keys]
        missing = sorted((i for i, v in enumerate(vectors) if not v), key=lambda i: len(keys[i][1]))
        return cls(group, vectors, missing, [keys[i][1] for i in missing])

    def fill(self, encoded: list[list[float]]) -> None:
        for i, vector in zip(self.missing, encoded, strict=True):
            self.vectors[i] = vector
        offset = 0
        for item in self.group:
            item.vectors = self.vectors[offset : offset + len(item.spans)]
            offset += len(item.spans)


def encode(texts: list[str]) -> tuple[list[list[float]], float]:
    """Embed texts (in one call: the backend sorts them by length and batches them, and a batch is padded to its
    longest text, so the more texts it sees at once, the less padding); the vectors and the seconds it took."""
    began = time.perf_counter()
    vectors: list[list[float]] = embeddings.embed(texts).tolist()
    return vectors, time.perf_counter() - began
