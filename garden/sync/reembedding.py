"""Embedding again the current passages that another embedder made (EMBEDDING_BACKEND was switched, or its
export changed), so retrieval never compares a question's vector with vectors of another model."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from garden.models import Passage
from garden.services import embedding_input
from garden.sync.embedding import Progress, encode
from providers import embeddings

BATCH_CHUNKS = 256  # re-embedded, then written, at a time: an interrupted run loses at most one batch


def passages_reembed(
    on_start: Callable[[int], None] | None = None, on_progress: Progress | None = None
) -> tuple[int, float]:
    """Embed the current chunks another embedder made again with the configured one, a batch per transaction
    (a re-run resumes); how many, and the seconds spent encoding them."""
    made_by = embeddings.embedder()
    stale = Passage.objects.filter(is_current=True).exclude(embedded_by=made_by)
    total = stale.count()
    if total and on_start:
        on_start(total)
    done, seconds = 0, 0.0
    while rows := list(stale.order_by("pk").values_list("pk", "revision__title", "text")[:BATCH_CHUNKS]):
        vectors, spent = encode([embedding_input(title, text) for _, title, text in rows])
        with transaction.atomic():
            Passage.objects.bulk_update(
                [
                    Passage(pk=pk, embedding=vector, embedded_by=made_by)
                    for (pk, _, _), vector in zip(rows, vectors, strict=True)
                ],
                ["embedding", "embedded_by"],
            )
        done += len(rows)
        seconds += spent
        if on_progress:
            on_progress(len(rows))
    return done, seconds
