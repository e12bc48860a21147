"""Switching a garden over to the configured embedding model (`reembed_garden`): the vector column resized when
the model's vectors are of another size, every passage another model embedded embedded again, current ones first,
then the column and its index made whole and the refusal gate calibrated again for the new model's similarities."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from garden.sync.embedding import Progress
from garden.sync.importing import self_calibration_queue
from garden.sync.reembedding import passages_reembed
from garden.sync.vector_column import vector_column_dimensions, vector_column_finish, vector_column_resize
from providers import embeddings


@dataclass(frozen=True)
class Switched:
    embedder: str  # what embedded the garden's passages now
    dimensions: int  # the size of its vectors
    resized_from: int | None  # the column's size before, when it changed
    passages: int  # embedded again
    seconds: float  # spent encoding them


def garden_switch(
    on_start: Callable[[int], None] | None = None, on_progress: Progress | None = None
) -> Switched:
    """Embed the whole garden (current and earlier passages) with the configured embedder where another made it,
    resizing the vector column first when its size differs. Resumable: an interrupted run leaves what it
    embedded (a batch per transaction) and the next picks up the rest; until one finishes, questions are told
    the garden is being switched over (`EmbedderMismatch`) rather than searched across two models. EmbeddingError
    when the served model fails, after the batches already stored."""
    wanted = embeddings.dimensions()
    column = vector_column_dimensions()
    if column != wanted:
        vector_column_resize(wanted)
    done, seconds = passages_reembed(on_start, on_progress, superseded=True)
    vector_column_finish()
    if done:
        self_calibration_queue()
    return Switched(embeddings.embedder(), wanted, column if column != wanted else None, done, seconds)
