"""Yardsticks: references that do not depend on our code, measured at the start of each bench run and again,
lighter, between its sections, and every timed figure of the report divided by the one it depends on, measured
beside it, so a slower machine (or a busier one, for the length of a section) and slower code read apart.

A figure in yardstick units is a ratio: an import that takes 12 encoder runs takes 12 on a fast machine and on a
slow one; when it takes 24, the code changed. docs/performance.md#yardsticks has the figures.
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Any

from django.db import connection

from bench.timing import timed
from providers import embeddings


class Yardstick(StrEnum):
    CPU = "cpu"  # a fixed pure-Python loop: parsing, judging, planning
    CPU_TIME = (
        "cpu_time"  # the same loop's CPU time, not its wall time: for figures that are CPU time themselves
    )
    ENCODER = "encoder"  # the configured encoder embedding fixed passages: imports, embeddings
    ROUND_TRIP = "round_trip"  # `SELECT 1` to PostgreSQL: retrieval and everything else bound by the database


# Steps of the CPU loop: about a tenth of a second on the shared 2-core machine, long enough to time well.
CPU_LOOP_STEPS = 1_000_000
CPU_LOOP_REPEATS = 5
ENCODER_REPEATS = 3
ROUND_TRIPS = 200
# Beside each section, before and after it: the same references, lighter (about two seconds in all on the shared
# 2-core machine), so that a neighbour who starts or stops in the middle of a run weighs on a figure and on the
# yardstick it is divided by alike (docs/performance.md#yardsticks).
BESIDE_CPU_REPEATS = 3
BESIDE_ENCODER_REPEATS = 1
BESIDE_ROUND_TRIPS = 100

_SUBJECTS = [
    "The keeper",
    "A swarm",
    "The old orchard",
    "Each hive",
    "The cider press",
    "A frost",
    "The queen",
    "Rain",
]
_PREDICATES = [
    "moved the frames to the upper box before the first cold night of the autumn",
    "left the clover field by the hedge untouched for another week of flowers",
    "was recorded in the ledger with the date, the weather and the weight of honey taken",
    "needed a second ladder to reach the highest branches of the pear trees",
    "kept the bees inside for three days while the wind blew from the east",
    "brought the harvest in early, so the late plums were pressed with the apples",
    "cost the garden most of its blossom, and the crop was small that year",
    "filled the water butts by the shed, which saved a trip to the well",
]
# 64 fixed passages for the encoder yardstick: the same words in every run and checkout.
PASSAGES = [f"{subject} {predicate}." for subject in _SUBJECTS for predicate in _PREDICATES]
# Embedded this many times over in one call, its time divided by as much: a yardstick of one 64-passage call
# (about 60 ms on a quiet machine) varied 1.33x over 15 calls in a row, and one of four times over 1.07x
# (docs/performance.md#yardsticks). The unit stays the time of 64 passages.
ENCODER_TIMES = 4

# The yardstick each timed figure of the report is divided by, by path ("*" stands for any one key or position).
PER: dict[str, Yardstick] = {
    "import.seconds": Yardstick.ENCODER,
    "import.passages_per_second": Yardstick.ENCODER,
    "embedding_backends.*.passages_per_second": Yardstick.ENCODER,
    "embedding_backends.*.query_embedding.*": Yardstick.ENCODER,
    "embedding_backends.*.judge_claims_per_second": Yardstick.CPU,
    "large_garden.first_import_seconds": Yardstick.ENCODER,
    "large_garden.passages_per_second": Yardstick.ENCODER,
    "large_garden.encode_seconds": Yardstick.ENCODER,
    "large_garden.reimport_unchanged_seconds": Yardstick.CPU,
    # CPU seconds (an import's and the encode alone's, `bench.overhead`): in CPU seconds of the loop.
    "large_garden.*_cpu_seconds": Yardstick.CPU_TIME,
    "import_memory.sizes.*.seconds": Yardstick.ENCODER,
    "import_memory.sizes.*.passages_per_second": Yardstick.ENCODER,
    "import_memory.ask_on_largest.*": Yardstick.ROUND_TRIP,
    "logseq_import.logseq_seconds": Yardstick.ENCODER,
    "logseq_import.markdown_seconds": Yardstick.ENCODER,
    "logseq_import.*_encode_seconds": Yardstick.ENCODER,
    "logseq_import.*_reading_seconds": Yardstick.CPU,
    "logseq_import.*_cpu_seconds": Yardstick.CPU_TIME,
    "distributed_import.*.seconds": Yardstick.ENCODER,
    "distributed_import.*.passages_per_second": Yardstick.ENCODER,
    "query_embedding.*": Yardstick.ENCODER,
    "retrieval.sizes.*.hnsw_vector_search.*": Yardstick.ROUND_TRIP,
    "retrieval.sizes.*.sql_exact_scan.*": Yardstick.ROUND_TRIP,
    "retrieval.sizes.*.hybrid_retrieval.*": Yardstick.ROUND_TRIP,
    "retrieval.sizes.*.numpy_exact_scan.*": Yardstick.CPU,
    "hnsw.numpy_exact_scan.*": Yardstick.CPU,
    "hnsw.indexes.*.ef_search.*.*": Yardstick.ROUND_TRIP,
    "refusal_decision.*": Yardstick.ROUND_TRIP,
    "notes.sizes.*.hybrid_retrieval.*": Yardstick.ROUND_TRIP,
    "notes.sizes.*.refusal_decision.*": Yardstick.ROUND_TRIP,
    "judge.six_claims_eight_passages_*_cpu_ms": Yardstick.CPU_TIME,
    "judge.six_claims_eight_passages_*": Yardstick.CPU,
    "judge.local_judge_claims_per_second": Yardstick.CPU,
    "citations.audit_seconds": Yardstick.CPU,
    "citations.citations_per_second": Yardstick.CPU,
    "verify_all.*.seconds": Yardstick.CPU,
    # The CPU time the worker's processes used: what the code costs, whatever share of the cores it was given.
    "verify_all.*.cpu_seconds": Yardstick.CPU_TIME,
}


def _cpu_loop() -> int:
    total = 0
    for step in range(CPU_LOOP_STEPS):
        total = (total + step * step) % 1_000_003
    return total


def cpu_loop_seconds(repeats: int = CPU_LOOP_REPEATS) -> float:
    """Seconds the fixed loop takes (median of `repeats`)."""
    return statistics.median(timed(_cpu_loop)[0] / 1000 for _ in range(repeats))


def cpu_loop_cpu_seconds(repeats: int = CPU_LOOP_REPEATS) -> float:
    """CPU seconds the fixed loop takes (median of `repeats`): what a busy machine's share of a core leaves out."""
    samples = []
    for _ in range(repeats):
        began = time.thread_time()
        _cpu_loop()
        samples.append(time.thread_time() - began)
    return statistics.median(samples)


def encoder_seconds(repeats: int = ENCODER_REPEATS) -> float:
    """Seconds the configured encoder takes to embed PASSAGES (in one call of them `ENCODER_TIMES` over, divided
    by as much; median of `repeats`, model loaded first)."""
    embeddings.load()
    embeddings.embed(PASSAGES[:8])
    texts = PASSAGES * ENCODER_TIMES
    return statistics.median(timed(embeddings.embed, texts)[0] / 1000 / ENCODER_TIMES for _ in range(repeats))


def round_trip_ms(trips: int = ROUND_TRIPS) -> float:
    """Milliseconds of a `SELECT 1` to PostgreSQL and back (median of `trips`)."""
    samples = []
    with connection.cursor() as cursor:
        for _ in range(trips):
            began = time.perf_counter()
            cursor.execute("SELECT 1")
            cursor.fetchone()
            samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": [round(load, 1) for load in os.getloadavg()],
    }


def yardstick_measure(
    cpu: Callable[[], float] = cpu_loop_seconds,
    encoder: Callable[[], float] = encoder_seconds,
    round_trip: Callable[[], float] = round_trip_ms,
    cpu_time: Callable[[], float] = cpu_loop_cpu_seconds,
) -> dict[str, Any]:
    """The report's "yardstick" section: each reference measured now, and the machine it ran on."""
    encoder_s = encoder()
    return {
        "cpu_loop_seconds": round(cpu(), 4),
        "cpu_loop_cpu_seconds": round(cpu_time(), 4),
        "encoder": embeddings.embedder(),
        "encoder_passages": len(PASSAGES),
        "encoder_seconds": round(encoder_s, 4),
        "encoder_passages_per_second": round(len(PASSAGES) / encoder_s, 1),
        "round_trip_ms": round(round_trip(), 4),
        "machine": machine(),
    }


def yardsticks_beside() -> dict[str, float]:
    """The references again, lighter (BESIDE_*), as they stand between two sections."""
    return {
        "cpu_loop_seconds": cpu_loop_seconds(BESIDE_CPU_REPEATS),
        "cpu_loop_cpu_seconds": cpu_loop_cpu_seconds(BESIDE_CPU_REPEATS),
        "encoder_seconds": encoder_seconds(BESIDE_ENCODER_REPEATS),
        "round_trip_ms": round_trip_ms(BESIDE_ROUND_TRIPS),
    }


class SectionYardsticks:
    """The yardsticks beside each section: measured between sections (each measurement closes one section and
    opens the next), a section's are the geometric mean of those before and after it. They go in the report's
    "yardstick" section under "beside", by section, and `ratios` divides the section's figures by them."""

    def __init__(self, first: dict[str, Any], measure: Callable[[], dict[str, float]] = yardsticks_beside):
        self.measure = measure
        self.last = {name: float(first[name]) for name in YARDSTICK_LENGTHS if name in first}
        self.beside: dict[str, dict[str, float]] = {}

    @contextlib.contextmanager
    def section(self, name: str) -> Iterator[None]:
        before, began = self.last, time.monotonic()
        yield
        # On stderr, so that the report (stdout) stays JSON: where a run's time went.
        print(f"[bench] {name} took {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
        self.last = after = self.measure()
        self.beside[name] = {
            length: round(math.sqrt(before[length] * after[length]), 5)
            for length in after
            if length in before
        }


# The lengths a "yardstick" section (or one section's beside it) holds, by name.
YARDSTICK_LENGTHS = ("cpu_loop_seconds", "cpu_loop_cpu_seconds", "encoder_seconds", "round_trip_ms")


def yardstick_seconds(section: dict[str, Any]) -> dict[Yardstick, float]:
    """Each yardstick's length in seconds, from a report's "yardstick" section (or one section's beside it), of
    those it holds: a report from before the CPU-time yardstick has none, and its figures divided by it no ratio."""
    lengths = {
        Yardstick.CPU: section.get("cpu_loop_seconds"),
        Yardstick.CPU_TIME: section.get("cpu_loop_cpu_seconds"),
        Yardstick.ENCODER: section.get("encoder_seconds"),
        Yardstick.ROUND_TRIP: section["round_trip_ms"] / 1000 if "round_trip_ms" in section else None,
    }
    return {per: length for per, length in lengths.items() if length}


def is_throughput(path: str) -> bool:
    """Whether a figure counts things per second (bigger is better), rather than timing something."""
    return path.endswith("per_second")


def _seconds(path: str, value: float) -> float | None:
    """A timed figure in seconds, by its name's unit; None when the name gives none."""
    name = path.rsplit(".", 1)[-1]
    if name.endswith("_ms"):
        return value / 1000
    if name.endswith(("seconds", "_s")) and not is_throughput(path):
        return value
    return None


def _leaves(value: object, path: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(value, dict):
        items: Iterator[tuple[object, object]] = iter(value.items())
    elif isinstance(value, list):
        items = iter(enumerate(value))
    else:
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield path, float(value)
        return
    for key, item in items:
        yield from _leaves(item, f"{path}.{key}" if path else str(key))


def yardstick_for(path: str) -> Yardstick | None:
    """The yardstick a figure at `path` is divided by (PER), or None when it is not a timed figure."""
    parts = path.split(".")
    for pattern, per in PER.items():
        wanted = pattern.split(".")
        if len(wanted) == len(parts) and all(map(fnmatch.fnmatchcase, parts, wanted)):
            return per
    return None


def _significant(number: float) -> float:
    return float(f"{number:.3g}")


def ratios(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every timed figure of `report` in units of its yardstick: a time over the yardstick's time (how many
    yardsticks it takes), a throughput times it (how many things one yardstick's time does). A section's figures
    are divided by the yardsticks measured beside it, when the report has them, else by those of its start."""
    start = yardstick_seconds(report["yardstick"])
    beside = {
        name: {**start, **yardstick_seconds(lengths)}
        for name, lengths in report["yardstick"].get("beside", {}).items()
    }
    found: dict[str, dict[str, Any]] = {}
    for path, value in _leaves({k: v for k, v in report.items() if k != "yardstick"}):
        per = yardstick_for(path)
        lengths = beside.get(path.split(".", 1)[0], start)
        if per is None or per not in lengths:
            continue
        if is_throughput(path):
            ratio = value * lengths[per]
        elif (seconds := _seconds(path, value)) is not None:
            ratio = seconds / lengths[per]
        else:
            continue
        found[path] = {"value": value, "per": str(per), "ratio": _significant(ratio)}
    return found
