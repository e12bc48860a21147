"""An import's overhead beyond embedding: the import, and the encoder alone on the same passages, each timed
between two measurements of the encoder yardstick, so that each is a number of encoder runs measured beside it
and their ratio holds still while a neighbour's load comes and goes (docs/performance.md, "Where an import's
time goes")."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from bench.timing import timed
from bench.yardstick import encoder_seconds
from garden.models import Passage
from garden.services import embedding_input
from providers import embeddings

T = TypeVar("T")


def in_encoder_runs(fn: Callable[[], T]) -> tuple[float, float, T]:
    """`fn()` timed: its seconds, those seconds in encoder runs (over the geometric mean of the encoder
    yardstick measured just before and just after it), and what it returned."""
    before = encoder_seconds()
    milliseconds, result = timed(fn)
    after = encoder_seconds()
    seconds = milliseconds / 1000
    return seconds, seconds / math.sqrt(before * after), result


def garden_passages(folder: Path) -> list[str]:
    """What the import embedded for the garden at `folder`: its current passages as the encoder reads them,
    shortest first, as one encode of them all would take them."""
    rows = Passage.objects.filter(article__garden=str(folder.resolve()), is_current=True).select_related(
        "revision"
    )
    return sorted((embedding_input(row.revision.title, row.text) for row in rows), key=len)


def encode_alone(texts: Sequence[str]) -> None:
    """The model's own encode of `texts`, all at once: the floor an import of them cannot go below."""
    embeddings.embed(list(texts))


@dataclass
class Overhead:
    """Imports and encodes of the same passages, paired run by run, each in seconds and in encoder runs."""

    import_seconds: list[float] = field(default_factory=list)
    encode_seconds: list[float] = field(default_factory=list)
    import_runs: list[float] = field(default_factory=list)
    encode_runs: list[float] = field(default_factory=list)

    def add_import(self, seconds: float, runs: float) -> None:
        self.import_seconds.append(seconds)
        self.import_runs.append(runs)

    def add_encode(self, seconds: float, runs: float) -> None:
        self.encode_seconds.append(seconds)
        self.encode_runs.append(runs)

    def percents(self) -> list[float]:
        """Each run's overhead beyond embedding, in per cent: its import over its encode, in encoder runs."""
        return [100 * (i / e - 1) for i, e in zip(self.import_runs, self.encode_runs, strict=True) if e]

    def figures(self, prefix: str, chunks: int) -> dict[str, float | list[float]]:
        """Medians over the runs, and the spread of the overhead; `prefix` names the garden ("" or "logseq_")."""
        imported, encoded = statistics.median(self.import_seconds), statistics.median(self.encode_seconds)
        runs_i, runs_e = statistics.median(self.import_runs), statistics.median(self.encode_runs)
        percents = self.percents()
        per_thousand = 1000 / chunks if chunks else 0.0
        return {
            f"{prefix}encode_seconds": round(encoded, 2),
            f"{prefix}import_encoder_runs": round(runs_i, 1),
            f"{prefix}encode_encoder_runs": round(runs_e, 1),
            f"{prefix}overhead_beyond_encode_pct": round(statistics.median(percents), 1),
            f"{prefix}overhead_range_pct": [round(min(percents), 1), round(max(percents), 1)],
            f"{prefix}overhead_per_chunk_ms": round(per_thousand * (imported - encoded), 2),
            # The same in encoder runs, which a busier machine does not move: what compares across sizes.
            f"{prefix}overhead_encoder_runs_per_1000_chunks": round(per_thousand * (runs_i - runs_e), 2),
        }
