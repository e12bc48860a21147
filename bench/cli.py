"""`python -m bench`: benchmark figures as JSON, measured in a scratch database that is dropped after."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.test import override_settings

from bench.answerability import SMALLEST_QUESTIONS, bench_answerability
from bench.baseline import (
    BASELINE_FILE,
    BASELINE_WRITTEN,
    DEFAULT_MARGIN,
    BaselineError,
    against_baseline,
    baseline_load,
    baseline_write,
    confirmed,
    not_confirmed_message,
    regressions,
    regressions_confirm,
    regressions_message,
)
from bench.citations import CitationsError, bench_citations
from bench.embedding import bench_backends, bench_query_embedding
from bench.filling import corpus_remove
from bench.hnsw import HNSW_PAIRS, bench_hnsw
from bench.imports import DISTRIBUTED_NOTES, bench_distributed_import, bench_import, bench_large_garden
from bench.judge import bench_judge
from bench.logseq import GRAPH_PAGES, bench_logseq_import
from bench.mcp import MCP_CALLS, bench_mcp
from bench.memory import MEMORY_NOTE_COUNTS, bench_import_memory
from bench.notes import NOTE_COUNTS, bench_notes
from bench.retrieval import SIZES, bench_refusal, bench_retrieval
from bench.stream_load import STREAM_READERS, STREAM_SECONDS, StreamLoadError, bench_streaming
from bench.verify_all import bench_verify_all, golden_subset
from bench.yardstick import SectionYardsticks, ratios, yardstick_measure
from config.database import current_database_url
from garden.golden import CATEGORIES, DEFAULT_FILE, GoldenEntry, golden_load
from providers.embeddings import LOCAL_BACKENDS, EmbeddingBackend

DESCRIPTION = (
    "Print benchmark medians as JSON (the embedding backends side by side, import, the peak memory of importing "
    "5,000 and 50,000 notes, an import fanned out to one and two Celery workers, query embedding, retrieval at "
    "1k/10k/100k passages, the HNSW recall/latency curve over ef_search, refusal, retrieval and refusal at "
    "50/5,000/50,000 notes, the judge, the citation gate on drafts citing this repository, Verify-all, "
    "concurrent fact-checks over MCP's HTTP transport, time to first word of streamed answers, and answerability: "
    "answers that give the fact, and abstentions, on SQuAD 2.0's article and the golden set)."
)


SAMPLE = [  # earlier/ is an older copy of six of the garden's notes: their superseded revisions
    Path(settings.BASE_DIR) / "garden" / "sample" / "earlier",
    Path(settings.BASE_DIR) / "garden" / "sample" / "articles",
]


SECTIONS = [
    "embedding_backends",
    "large_garden",
    "import_memory",
    "logseq_import",
    "distributed_import",
    "query_embedding",
    "retrieval",
    "hnsw",
    "refusal_decision",
    "notes",
    "judge",
    "citations",
    "verify_all",
    "mcp",
    "streaming",
    "answerability",
]


# The smallest sizes: CI's smoke run (tests/test_bench.py) and the stored baseline (`make bench-baseline`).
SMALLEST_ARGS = shlex.split(
    "--runs 1 --sizes 1000 --notes 50 500 --garden-notes 20 --memory-notes 20 50 --distributed-notes 20 "
    "--graph-pages 20 --backends onnx-int8 --mcp-calls 4 --verify-all-questions 12 "
    "--stream-readers 4 --stream-seconds 2 --stream-servers 1 1 "
    f"--answerability-questions {SMALLEST_QUESTIONS}"
)
# Options of the run itself, not of what it measures.
RUN_OPTIONS = ("smallest", "baseline", "write_baseline", "check_baseline")


def _pair(text: str) -> tuple[int, int]:
    m, _, ef_construction = text.partition(":")
    return int(m), int(ef_construction)


def _margin(text: str) -> float:
    margin = float(text)
    if margin <= 1:
        raise argparse.ArgumentTypeError(f"a margin is a factor above 1 (1.6: 60 % worse), not {text}")
    return margin


def parser_build() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=DESCRIPTION)
    parser.add_argument(
        "--smallest",
        action="store_true",
        help=f"The smallest sizes, as CI runs them ({' '.join(SMALLEST_ARGS)}); options given after win.",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=BASELINE_FILE,
        metavar="FILE",
        help="The stored yardstick ratios each run is compared with (default bench/baseline.json).",
    )
    parser.add_argument(
        "--write-baseline",
        action="store_true",
        help="Store this run's yardstick ratios as the baseline, with the date, commit and machine.",
    )
    parser.add_argument(
        "--check-baseline",
        type=_margin,
        nargs="?",
        const=DEFAULT_MARGIN,
        metavar="MARGIN",
        help=f"Exit non-zero when a figure is slower than its baseline, in yardstick units, by more than MARGIN "
        f"times (default {DEFAULT_MARGIN}: 60 %% slower), or when there is no baseline of these sizes.",
    )
    parser.add_argument("--runs", type=int, default=5, help="Repeated runs; medians are reported.")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument(
        "--notes",
        type=int,
        nargs="+",
        default=list(NOTE_COUNTS),
        help="Garden sizes, in notes, at which the notes section times retrieval and the refusal decision.",
    )
    parser.add_argument(
        "--garden-notes",
        type=int,
        default=2000,
        help="Notes in the generated garden whose import is timed.",
    )
    parser.add_argument(
        "--memory-notes",
        type=int,
        nargs="+",
        default=list(MEMORY_NOTE_COUNTS),
        help="Garden sizes, in notes, whose first import is measured in a process of its own (import_memory).",
    )
    parser.add_argument(
        "--graph-pages",
        type=int,
        default=GRAPH_PAGES,
        help="Pages of the generated Logseq graph imported beside a Markdown vault of as many notes.",
    )
    parser.add_argument(
        "--distributed-notes",
        type=int,
        default=DISTRIBUTED_NOTES,
        help="Notes in the generated garden imported with one Celery worker, then two (distributed_import).",
    )
    parser.add_argument(
        "--backends",
        nargs="+",
        choices=list(LOCAL_BACKENDS),
        default=list(LOCAL_BACKENDS),
        help="Embedding backends compared side by side (passages/s, query p50/p95, the judge's claims/s).",
    )
    parser.add_argument(
        "--no-verify-all",
        action="store_false",
        dest="verify_all",
        help="Skip the Verify-all wall-time runs (they start Celery workers).",
    )
    parser.add_argument(
        "--verify-all-niceness",
        type=int,
        help="CPU niceness of the Verify-all runs' workers (default WORKER_NICENESS): 0 to see what they do "
        "when they do not yield to other processes on a shared machine.",
    )
    parser.add_argument(
        "--verify-all-questions",
        type=int,
        metavar="N",
        help="Verify-all only N questions of the golden set, taken from each category in turn (default: all).",
    )
    parser.add_argument(
        "--hnsw-sweep",
        nargs="*",
        type=_pair,
        metavar="M:EF_CONSTRUCTION",
        help="Build and measure these (m, ef_construction) pairs, or without any those of "
        "bench.hnsw.HNSW_PAIRS, not only the configured index (one index build at the largest size each).",
    )
    parser.add_argument(
        "--mcp-calls",
        type=int,
        default=MCP_CALLS,
        help="Agents, each with its own token, that call `check` on a 2,000-character text at once over MCP's "
        "HTTP transport (mcp).",
    )
    parser.add_argument(
        "--stream-readers",
        type=int,
        default=STREAM_READERS,
        help="Readers at once in the streaming section's larger size (the smaller is 1), as `make load` runs.",
    )
    parser.add_argument(
        "--stream-seconds",
        type=float,
        default=STREAM_SECONDS,
        help="Seconds each of the streaming section's configurations runs (streamed, whole, refused).",
    )
    parser.add_argument(
        "--stream-servers",
        type=int,
        nargs=2,
        metavar=("WEB", "CELERY"),
        help="The streaming section's web processes and Celery workers (default: `make load`'s).",
    )
    parser.add_argument(
        "--answerability-questions",
        type=int,
        metavar="N",
        help="Answerability on N answerable and N unanswerable questions of SQuAD 2.0's article (seeded), and "
        "N questions of each golden category (default: all of both).",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        default=SECTIONS,
        help="Measure only these sections (the sample garden is imported and timed in any case: the others "
        "are measured over it).",
    )
    return parser


def _backends(questions: list[GoldenEntry], runs: int, names: list[str]) -> dict[str, Any]:
    """The backends side by side: embedding figures, then the local judge's claims/s on each."""
    backends = [EmbeddingBackend(name) for name in names]
    figures = bench_backends([q.question for q in questions], runs, backends)
    for backend in backends:
        with override_settings(JUDGE_EMBEDDING_BACKEND=backend):
            judged = bench_judge(runs)
        figures[backend]["judge_claims_per_second"] = judged["local_judge_claims_per_second"]
    return figures


def report_measure(
    *,
    runs: int,
    sizes: list[int],
    notes: list[int],
    garden_notes: int,
    memory_notes: list[int],
    graph_pages: int,
    distributed_notes: int,
    verify_all: bool,
    verify_all_niceness: int | None,
    verify_all_questions: int | None,
    hnsw_sweep: list[tuple[int, int]] | None,
    only: list[str],
    backends: list[str],
    mcp_calls: int = MCP_CALLS,
    stream_readers: int = STREAM_READERS,
    stream_seconds: float = STREAM_SECONDS,
    stream_servers: Sequence[int] | None = None,
    answerability_questions: int | None = None,
) -> dict[str, Any]:
    """Each section asked for, measured in a scratch database of its own that is dropped after."""
    questions = golden_load(DEFAULT_FILE)
    in_scope = [q for q in questions if q.in_scope]
    out_of_scope = [q for q in questions if not q.in_scope]
    original = connection.settings_dict["NAME"]
    # Its own scratch database, so a benchmark never collides with a test run.
    connection.settings_dict["TEST"]["NAME"] = f"{original}_bench"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        # First, before the sections load the machine with work of their own; then again beside each section.
        report: dict[str, Any] = {"runs": runs, "yardstick": yardstick_measure()}
        beside = SectionYardsticks(report["yardstick"])
        with beside.section("import"):
            report["import"] = bench_import(SAMPLE, history=SAMPLE[:1])
        if "embedding_backends" in only:
            with beside.section("embedding_backends"):
                report["embedding_backends"] = _backends(questions, runs, backends)
        if "large_garden" in only:
            with beside.section("large_garden"):
                report["large_garden"] = bench_large_garden(garden_notes, runs)
        if "import_memory" in only:
            with beside.section("import_memory"):
                report["import_memory"] = bench_import_memory(
                    current_database_url(), memory_notes, in_scope, runs
                )
        if "logseq_import" in only:
            with beside.section("logseq_import"):
                report["logseq_import"] = bench_logseq_import(graph_pages, runs)
        if "distributed_import" in only:
            with beside.section("distributed_import"):
                report["distributed_import"] = bench_distributed_import(
                    current_database_url(), distributed_notes
                )
        if "query_embedding" in only:
            with beside.section("query_embedding"):
                report["query_embedding"] = bench_query_embedding([q.question for q in questions], runs)
        if "retrieval" in only:
            with beside.section("retrieval"):
                report["retrieval"] = bench_retrieval(in_scope, runs, sizes)
        if "hnsw" in only:
            pairs = None if hnsw_sweep is None else hnsw_sweep or HNSW_PAIRS
            # The sections after it time retrieval with the configured index.
            restore = bool({"refusal_decision", "notes"} & set(only))
            with beside.section("hnsw"):
                report["hnsw"] = bench_hnsw(in_scope, runs, max(sizes), pairs, restore=restore)
        if "refusal_decision" in only:
            with beside.section("refusal_decision"):
                report["refusal_decision"] = bench_refusal(out_of_scope, runs)
        corpus_remove()  # the notes section grows the sample garden, not the corpus's
        if "notes" in only:
            with beside.section("notes"):
                report["notes"] = bench_notes(in_scope, out_of_scope, runs, notes)
        if "judge" in only:
            with beside.section("judge"):
                report["judge"] = bench_judge(runs)
        if "citations" in only:
            with beside.section("citations"):
                report["citations"] = bench_citations(runs)
        if verify_all and "verify_all" in only:
            url = current_database_url()
            golden = golden_subset(verify_all_questions)
            with beside.section("verify_all"):
                one = bench_verify_all(url, 1, niceness=verify_all_niceness, golden_file=golden)
                two = bench_verify_all(url, 2, niceness=verify_all_niceness, golden_file=golden)
            report["verify_all"] = {
                "one_worker": one,
                "two_workers": two,
                "speedup_two_over_one": round(one["seconds"] / two["seconds"], 2) if two["seconds"] else None,
            }
        if "mcp" in only:
            with beside.section("mcp"):
                report["mcp"] = bench_mcp(mcp_calls)
        if "streaming" in only:
            with beside.section("streaming"):
                report["streaming"] = bench_streaming(
                    current_database_url(), stream_readers, stream_seconds, servers=stream_servers
                )
        if "answerability" in only:
            n = answerability_questions
            asked = questions if n is None else golden_load(golden_subset(n * len(CATEGORIES)))
            with beside.section("answerability"):
                report["answerability"] = bench_answerability(asked, n)
        report["yardstick"]["beside"] = beside.beside
    finally:
        connection.creation.destroy_test_db(original, verbosity=0)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, measure, print the report with its yardstick ratios and their change against the
    baseline; store or check the baseline if asked (Django must be set up: `python -m bench` does so)."""
    parser = parser_build()
    argv = list(sys.argv[1:] if argv is None else argv)
    options = vars(parser.parse_args(argv))
    if options["smallest"]:
        options = vars(parser.parse_args([*SMALLEST_ARGS, *argv]))
    path, margin = options["baseline"], options["check_baseline"]
    measuring = {name: value for name, value in options.items() if name not in RUN_OPTIONS}
    try:
        report = report_measure(**measuring)
    except (CitationsError, StreamLoadError) as error:
        print(error, file=sys.stderr)
        return 1
    report["ratios"] = ratios(report)
    problem = None
    try:
        baseline = baseline_load(path)
        report["against_baseline"] = against_baseline(report, baseline, measuring, path)
    except BaselineError as error:
        problem = str(error)
    runs: dict[str, list[float]] = {}
    if margin is not None and not problem:
        found = regressions(report["against_baseline"], margin)
        if found:
            runs = regressions_confirm(found, partial(_measure_again, measuring, baseline, path), margin)
            report["measured_again"] = runs
    print(json.dumps(report, indent=2))
    if options["write_baseline"]:
        baseline_write(path, report, measuring)
        print(BASELINE_WRITTEN.format(path=path, count=len(report["ratios"])), file=sys.stderr)
    if problem and (margin is not None or not options["write_baseline"]):
        print(problem, file=sys.stderr)
    if margin is None:
        return 0
    if problem:
        return 1
    slower = confirmed(runs, margin)
    if cleared := {figure: s for figure, s in runs.items() if figure not in slower}:
        print(not_confirmed_message(cleared, margin), file=sys.stderr)
    if slower:
        print(regressions_message(slower, margin, path), file=sys.stderr)
    return 1 if slower else 0


def _measure_again(
    measuring: dict[str, Any], baseline: dict[str, Any], path: Path, sections: list[str]
) -> dict[str, dict[str, Any]]:
    """These sections measured once more (the sample garden's import is in every run), against the baseline."""
    again = report_measure(**{**measuring, "only": [section for section in sections if section in SECTIONS]})
    again["ratios"] = ratios(again)
    return against_baseline(again, baseline, measuring, path)
