"""`python manage.py reembed_garden`: switch the garden over to the configured embedding model."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from garden.sync.switching import garden_switch
from providers.embeddings import EmbeddingError

SWITCHED = "Embedded {passages} passages again with {embedder} in {seconds:.1f}s."
RESIZED = "The passages' vectors went from {before} numbers to {after}; the vector index was built again."
UP_TO_DATE = "Every passage is already embedded with {embedder}: nothing to do."
STOPPED = "{error} What was embedded before it stopped is kept: run reembed_garden again to resume."


class Command(BaseCommand):
    help = (
        "Embed the garden's passages again with the configured embedder (EMBEDDING_BACKEND, "
        "OPENAI_EMBEDDING_MODEL, EMBEDDING_DIMENSIONS), resizing the vector column if its size changed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            switched = garden_switch()
        except EmbeddingError as error:
            raise CommandError(STOPPED.format(error=error)) from error
        if switched.resized_from is not None:
            self.stdout.write(RESIZED.format(before=switched.resized_from, after=switched.dimensions))
        if switched.passages:
            self.stdout.write(
                SWITCHED.format(
                    passages=switched.passages, embedder=switched.embedder, seconds=switched.seconds
                )
            )
        else:
            self.stdout.write(UP_TO_DATE.format(embedder=switched.embedder))
