"""The vectors of a group of notes: reused for passages an edit left alone, encoded for the rest; groups embedded
in this process, the next group's encoding overlapping the caller's writes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

from garden.models import Passage
from garden.services import embedding_input
from garden.sync.writing import Pending
from providers import embeddings

Progress = Callable[[int], None]
REPORT_EVERY = 64  # texts encoded between reports to a progress bar (a worker's report is a write to Redis)


def _previous_vectors(pending: Sequence[Pending]) -> dict[tuple[str, str], list[float]]:
    """The vectors of the current passages of the notes being revised, by (slug, embedding input): an edit
    re-embeds only the passages it changed (and those the configured embedder did not make)."""
    rows = Passage.objects.filter(
        is_current=True,
        article__slug__in=[p.parsed.slug for p in pending],
        embedded_by=embeddings.embedder(),
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


def encode(
    texts: list[str],
    on_batch: Progress | None = None,
    backend: embeddings.EmbeddingBackend | None = None,
) -> tuple[list[list[float]], float]:
    """Embed texts by `backend` (else the configured one); the vectors and the seconds it took. The backend
    sorts what it is given by length and batches it (a batch is padded to its longest text, so the more texts
    it sees at once, the less padding): all at once, or with `on_batch`, REPORT_EVERY at a time, `on_batch`
    hearing how many are done after each."""
    began = time.perf_counter()
    step = max(1, len(texts) if on_batch is None else REPORT_EVERY)
    vectors: list[list[float]] = []
    for start in range(0, len(texts), step):
        vectors += embeddings.embed(texts[start : start + step], backend=backend).tolist()
        if on_batch:
            on_batch(len(vectors))
    return vectors, time.perf_counter() - began


class Embedded(NamedTuple):
    group: Sequence[Pending]  # its notes' vectors filled in
    encoded: int  # vectors computed; the others were reused
    seconds: float  # spent encoding them


def groups_embedded(groups: Iterable[Sequence[Pending]], on_progress: Progress | None) -> Iterator[Embedded]:
    """The groups with their vectors, in order, encoded in this process: the next group's encoding runs in a
    thread (torch leaves Python's lock) while the caller writes this one. Groups are taken one ahead."""
    following = iter(groups)
    first = next(following, None)
    if first is None:
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as encoder:
        planned = Embedding.plan(first)
        encoding = encoder.submit(encode, planned.texts)
        while True:
            encoded, seconds = encoding.result()
            planned.fill(encoded)
            if on_progress:
                on_progress(len(encoded))
            done = planned
            upcoming = next(following, None)
            if upcoming is not None:
                planned = Embedding.plan(upcoming)
                encoding = encoder.submit(encode, planned.texts)
            yield Embedded(done.group, len(encoded), seconds)
            if upcoming is None:
                return
