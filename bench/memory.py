"""An import's peak memory: generated gardens imported by `import_garden` in a process of its own, then asking
on the largest."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.imports import generate_garden
from bench.timing import percentiles, timed
from garden.golden import GoldenEntry
from garden.models import Article, Passage

# Garden sizes whose first import is measured in a process of its own: its peak memory must not grow with the
# garden beyond the notes in flight (issue: peak at 50,000 within 1.2x of the peak at 5,000).
MEMORY_NOTE_COUNTS = (5_000, 50_000)


def _import_process(folder: Path, database_url: str) -> dict[str, Any]:
    """`import_garden folder` in a process of its own (the embedding model loaded there, as a scheduled sync
    has it): its wall time and its peak resident memory, read from the kernel's account of that child."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "import_garden", str(folder), "--no-progress"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DATABASE_URL": database_url},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"import_garden {folder} failed:\n{errors.decode(errors='replace')[-3000:]}")
    return {"seconds": time.perf_counter() - began, "peak_mib": usage.ru_maxrss / 1024}


def bench_import_memory(
    database_url: str, counts: Sequence[int], questions: Sequence[GoldenEntry], runs: int
) -> dict[str, Any]:
    """The first import of generated gardens of each size, each by `import_garden` in a process of its own:
    seconds and passages/s (the process's wall time: its start and the model's loading included)
    and the process's peak memory (the model's own included); then, on the largest garden,
    asking the golden questions (retrieval and the local synthesiser, as a reader's ask, the check aside):
    p50/p95. The gardens are removed after."""
    from garden.answering.asking import question_ask
    from garden.models import Question

    sizes: dict[str, Any] = {}
    asks: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in counts:
            folder = generate_garden(Path(scratch) / f"garden-{count}", count).resolve()
            figures = _import_process(folder, database_url)
            passages = Passage.objects.filter(article__garden=str(folder), is_current=True).count()
            sizes[str(count)] = {
                "passages": passages,
                "seconds": round(figures["seconds"], 1),
                "passages_per_second": round(passages / figures["seconds"], 1),
                "peak_mib": round(figures["peak_mib"]),
            }
            if count == max(counts):
                asked_since = Question.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
                for _ in range(runs):
                    asks += [timed(partial(question_ask, text=q.question))[0] for q in questions]
                Question.objects.filter(pk__gt=asked_since).delete()
            Article.objects.filter(garden=str(folder)).delete()
    peaks = [sizes[str(count)]["peak_mib"] for count in counts]
    return {
        "sizes": sizes,
        "peak_largest_over_smallest": round(peaks[-1] / peaks[0], 2) if peaks[0] else None,
        "ask_on_largest": percentiles(asks),
    }
