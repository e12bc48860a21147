"""Embedding again the current passages that another embedder made (EMBEDDING_BACKEND was switched, or its
export changed), so retrieval never compares a question's vector with vectors of another model."""

from __future__ import annotations

from collections.abc import Callable

from django.db import connection, transaction

from garden.models import Passage
from garden.services import embedding_input
from garden.sync.embedding import Progress, encode
from providers import embeddings

BATCH_PASSAGES = 256  # re-embedded, then written, at a time: an interrupted run loses at most one batch


def passages_reembed(
    on_start: Callable[[int], None] | None = None,
    on_progress: Progress | None = None,
    *,
    superseded: bool = False,
) -> tuple[int, float]:
    """Embed the current passages another embedder made again with the configured one, a batch per transaction
    (a re-run resumes); how many, and the seconds spent encoding them. With `superseded`, earlier revisions'
    passages too (the judges compare them with the cited ones), after the current ones: a garden switched to
    another model (`reembed_garden`)."""
    made_by = embeddings.embedder()
    stale = Passage.objects.exclude(embedded_by=made_by)
    if not superseded:
        stale = stale.filter(is_current=True)
    # Current passages first, so questions are answered again as soon as may be.
    ordering = ["-is_current", "pk"] if superseded else ["pk"]
    total = stale.count()
    if total and on_start:
        on_start(total)
    done, seconds = 0, 0.0
    while rows := list(
        stale.order_by(*ordering).values_list("pk", "revision__title", "text")[:BATCH_PASSAGES]
    ):
        vectors, spent = encode([embedding_input(title, text) for _, title, text in rows])
        with transaction.atomic():
            _vectors_write([pk for pk, _, _ in rows], vectors, made_by)
        done += len(rows)
        seconds += spent
        if on_progress:
            on_progress(len(rows))
    return done, seconds


def _vectors_write(pks: list[int], vectors: list[list[float]], made_by: str) -> None:
    """Set the passages' vectors in one query. Not `bulk_update`: it casts each value to the model's declared
    `vector(384)`, while the column may be of a served model's size (`garden.sync.vector_column`)."""
    literals = ["[" + ",".join(repr(float(x)) for x in vector) + "]" for vector in vectors]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Passage._meta.db_table} AS p SET embedding = v.embedding::vector, embedded_by = %s "
            "FROM unnest(%s::bigint[], %s::text[]) AS v(id, embedding) WHERE p.id = v.id",
            [made_by, pks, literals],
        )
