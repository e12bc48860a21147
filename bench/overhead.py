"""An import's overhead beyond embedding: the import, and the encoder alone on the same passages, each timed
between two measurements of the encoder yardstick, so that each is a number of encoder runs measured beside it
and their ratio holds still while a neighbour's load comes and goes (docs/performance.md, "Where an import's
time goes"). Each also in CPU seconds (this process's and the database server's, when it runs here): the work
beyond the encoder's, which a neighbour's load does not change, and the least overhead it could make were all
of it done beside the encoder on every core."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from django.db import connection

from bench.timing import cpu_seconds, timed
from bench.yardstick import encoder_seconds
from garden.models import Passage
from garden.services import embedding_input
from providers import embeddings

T = TypeVar("T")


class Run(NamedTuple, Generic[T]):
    seconds: float
    encoder_runs: float  # the seconds over the geometric mean of the encoder yardstick before and after
    cpu_seconds: float  # this process's (every thread's) and the database server's, when it runs here
    result: T


def database_cpu_seconds() -> float:
    """CPU seconds the PostgreSQL server has used (its processes, and its workers that have ended: a parallel
    index build's), when it runs on this machine; else 0.0."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    try:
        stat = Path(f"/proc/{backend}/stat").read_text()
        command = Path(f"/proc/{backend}/cmdline").read_bytes()
    except OSError:
        return 0.0  # another machine's (or container's) server
    if b"postgres" not in command:
        return 0.0
    return cpu_seconds(int(stat.rsplit(")", 1)[1].split()[1]), reaped=True)  # its postmaster's


def in_encoder_runs(fn: Callable[[], T]) -> Run[T]:
    """`fn()` timed, in seconds, in encoder runs and in CPU seconds, and what it returned."""
    before = encoder_seconds()
    cpu_before = time.process_time() + database_cpu_seconds()
    milliseconds, result = timed(fn)
    cpu = time.process_time() + database_cpu_seconds() - cpu_before
    after = encoder_seconds()
    seconds = milliseconds / 1000
    return Run(seconds, seconds / math.sqrt(before * after), cpu, result)


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
    """Imports and encodes of the same passages (`in_encoder_runs`), paired run by run."""

    imports: list[Run[Any]] = field(default_factory=list)
    encodes: list[Run[Any]] = field(default_factory=list)

    def percents(self) -> list[float]:
        """Each run's overhead beyond embedding, in per cent: its import over its encode, in encoder runs."""
        return [
            100 * (i.encoder_runs / e.encoder_runs - 1)
            for i, e in zip(self.imports, self.encodes, strict=True)
            if e.encoder_runs
        ]

    def figures(self, prefix: str, passages: int) -> dict[str, float | list[float]]:
        """Medians over the runs, and the spread of the overhead; `prefix` names the garden ("" or "logseq_")."""
        imported, encoded = (
            statistics.median(r.seconds for r in runs) for runs in (self.imports, self.encodes)
        )
        runs_i, runs_e = (
            statistics.median(r.encoder_runs for r in runs) for runs in (self.imports, self.encodes)
        )
        cpu_i, cpu_e = (
            statistics.median(r.cpu_seconds for r in runs) for runs in (self.imports, self.encodes)
        )
        percents = self.percents()
        per_thousand = 1000 / passages if passages else 0.0
        return {
            f"{prefix}encode_seconds": round(encoded, 2),
            f"{prefix}import_encoder_runs": round(runs_i, 1),
            f"{prefix}encode_encoder_runs": round(runs_e, 1),
            f"{prefix}overhead_beyond_encode_pct": round(statistics.median(percents), 1),
            f"{prefix}overhead_range_pct": [round(min(percents), 1), round(max(percents), 1)],
            f"{prefix}overhead_per_passage_ms": round(per_thousand * (imported - encoded), 2),
            # The same in encoder runs, which a busier machine does not move: what compares across sizes.
            f"{prefix}overhead_encoder_runs_per_1000_passages": round(per_thousand * (runs_i - runs_e), 2),
            f"{prefix}import_cpu_seconds": round(cpu_i, 1),
            f"{prefix}encode_cpu_seconds": round(cpu_e, 1),
            # The import's own work: CPU seconds beyond the encoder's, per 1,000 passages; and the overhead it
            # would make were all of it done beside the encoder on every core (the least the import can have).
            f"{prefix}overhead_cpu_seconds_per_1000_passages": round(per_thousand * (cpu_i - cpu_e), 2),
            f"{prefix}overhead_floor_pct": round(100 * (cpu_i - cpu_e) / (os.cpu_count() or 1) / encoded, 1)
            if encoded
            else 0.0,
        }
