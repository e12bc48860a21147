"""Retrieval and the refusal gate as the garden grows to 50, 5,000 and 50,000 notes that read like notes."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import json
import random
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import connection

from bench.retrieval import hybrid_retrieve
from bench.timing import percentiles, timed
from garden.answering.retrieval import Thresholds, matched_topics, retrieve, select
from garden.answering.retrieval_report import Observed, calibrate, held_out, measure, observe
from garden.answering.self_calibration import self_calibrate
from garden.golden import GoldenEntry
from garden.models import Article, ArticleRevision, Passage, Topic
from garden.models.vocabulary import names_keep
from garden.name_limits import NAME_TITLE_LIMIT
from garden.readers import Reader
from garden.services import embedding_input
from providers import embeddings

NOTE_COUNTS = (50, 5_000, 50_000)
# Packages whose docstrings make the notes section's garden: prose on many subjects (web, arrays, statistics,
# symbols, graphs, tensors, fake data), none of them railways. Read in this order, files shuffled by the seed.
NOTE_PACKAGES = ("django", "numpy", "scipy", "sklearn", "sympy", "networkx", "torch", "faker", "hypothesis")
# Notes up to this count get their passage embedded; those beyond are their names alone (a topic each), so
# 50,000 notes cost the topic lookup they would in a real garden without 50,000 passages to embed per run.
PASSAGE_NOTES = 5_000
NOTE_MIN_CHARS = 200  # a docstring shorter than this is a signature's gloss, not a note
NOTE_MAX_CHARS = 1_200  # about one passage of the importer's
NAME_ALIAS_LIMIT = 100  # Topic.aliases holds names of up to 100 characters
_DOC_SECTION = re.compile(
    r"^\s*(?:Parameters|Returns|Yields|Raises|Examples?|Notes|See Also|Attributes|Arguments|Args|References)"
    r"\s*:?\s*\n(?:\s*[-=~]{3,}\s*\n)?|^\s*(?::param|:return|>>>|\.\. )",
    re.MULTILINE,
)
_UNDERLINED = re.compile(r"^[^\n]*\n\s*[-=~^]{3,}\s*$", re.MULTILINE)  # a reST heading: not prose
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# The audience case: half of the garden's notes written for the first of five audiences, read by a reader of
# the second, who may read none of them: the filter's hardest case, with the most notes to leave out.
BENCH_AUDIENCES = tuple(f"bench-audience-{number}" for number in range(1, 6))
AUDIENCE_READER = Reader(audiences=frozenset({BENCH_AUDIENCES[1]}))


@dataclass(frozen=True)
class Note:
    """A note that reads like one: a title naming its subject, an alias (where it lives), a passage of prose."""

    title: str
    alias: str
    text: str


def _subject(name: str) -> str:
    """An object's name as a note's title: `select_related` is "Select related", `QuerySet` "Query set"."""
    spaced = _CAMEL.sub(" ", name.strip("_")).replace("_", " ").strip().lower()
    return spaced[:1].upper() + spaced[1:]


def _prose(docstring: str) -> str:
    """A docstring's prose: up to its first section of parameters, examples and the like, at most
    NOTE_MAX_CHARS, cut at a sentence's end."""
    text = inspect.cleandoc(docstring)
    cut = _DOC_SECTION.search(text)
    text = " ".join(_UNDERLINED.sub("", text[: cut.start() if cut else None]).split())
    if len(text) > NOTE_MAX_CHARS:
        text = text[:NOTE_MAX_CHARS]
        text = text[: text.rfind(". ") + 1] or text
    return text


def _docstring_notes(path: Path, module: str) -> Iterator[Note]:
    """A note for every module, class and function of the file: the prose of its docstring as its passage
    (empty when it has none long enough: such a note is its names alone)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    nodes: list[tuple[str, str, ast.AST]] = [(module.rsplit(".", 1)[-1], module, tree)]
    nodes += [
        (node.name, f"{module}.{node.name}", node)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for name, alias, node in nodes:
        title = _subject(name)[:NAME_TITLE_LIMIT]
        if not title or name.startswith("test"):
            continue
        docstring = ast.get_docstring(node, clean=False)  # type: ignore[arg-type]
        text = _prose(docstring) if docstring else ""
        yield Note(
            title=title, alias=alias[-NAME_ALIAS_LIMIT:], text=text if len(text) >= NOTE_MIN_CHARS else ""
        )


def real_notes(count: int, with_text: int = PASSAGE_NOTES, seed: int = 7) -> list[Note]:
    """`count` notes built from text on this machine, the first `with_text` with a passage: the docstrings of
    the installed NOTE_PACKAGES, each note titled by its subject (the object it documents) with its dotted
    path as an alias; the rest are the names of other objects alone. The same packages give the same notes
    (files in sorted order, shuffled by `seed`); a text or a dotted path is kept once. Cached in
    `.run/bench-notes/`, since reading the packages is slow (docs/commands.md)."""
    site = Path(np.__file__).parents[1]
    versions = [
        (package, getattr(sys.modules.get(package) or __import__(package), "__version__", ""))
        for package in NOTE_PACKAGES
    ]
    key = hashlib.sha256(repr((versions, count, with_text, seed, NOTE_MIN_CHARS)).encode()).hexdigest()[:16]
    cache = Path(settings.BASE_DIR) / ".run" / "bench-notes" / f"notes-{key}.json"
    if cache.exists():
        return [Note(**fields) for fields in json.loads(cache.read_text(encoding="utf-8"))]
    files = sorted(
        path
        for package in NOTE_PACKAGES
        for path in (site / package).rglob("*.py")
        if "tests" not in path.parts
    )
    random.Random(seed).shuffle(files)
    texted: dict[str, Note] = {}
    named: dict[str, Note] = {}
    for path in files:
        module = ".".join(path.relative_to(site).with_suffix("").parts).removesuffix(".__init__")
        for note in _docstring_notes(path, module):
            if note.text and len(texted) < with_text:
                texted.setdefault(note.text, note)
            else:
                named.setdefault(note.alias, Note(note.title, note.alias, ""))
        if len(texted) >= with_text and len(texted) + len(named) >= count:
            break
    notes = [*texted.values(), *named.values()][:count]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([dataclasses.asdict(note) for note in notes]), encoding="utf-8")
    return notes


def _note_vectors(notes: Sequence[Note]) -> npt.NDArray[np.float32]:
    """The notes' passages embedded as the import embeds them, cached in `.run/bench-notes/` by embedder and
    text (embedding them is slow; the texts and the model decide the vectors)."""
    inputs = [embedding_input(note.title, note.text) for note in notes]
    digest = hashlib.sha256("\0".join([embeddings.embedder(), *inputs]).encode()).hexdigest()[:16]
    cache = Path(settings.BASE_DIR) / ".run" / "bench-notes" / f"{digest}.npy"
    if cache.exists():
        return np.load(cache)
    vectors = embeddings.embed(inputs)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.save(cache, vectors)
    return vectors


def _notes_to(count: int, notes: Sequence[Note]) -> int:
    """Add notes (an article, its title and its alias as a topic, as a note of a garden without a
    `_garden.yaml` brings; and, for the first PASSAGE_NOTES, its passage) until the garden has `count` live
    articles. Returns the notes with a passage now in the garden."""
    have = Article.objects.live().count()
    start = Article.objects.filter(slug__startswith="bench-note-").count()
    wanted = notes[start : start + max(0, count - have)]
    with_text = [note for note in wanted if note.text]
    vectors = _note_vectors(with_text) if with_text else np.zeros((0, embeddings.DIMENSIONS), np.float32)
    for first in range(0, len(wanted), 5_000):
        batch = wanted[first : first + 5_000]
        numbers = range(start + first, start + first + len(batch))
        articles = Article.objects.bulk_create(
            Article(slug=f"bench-note-{n}", title=note.title) for n, note in zip(numbers, batch, strict=True)
        )
        topics = Topic.objects.bulk_create(
            Topic(slug=f"bench-note-{n}", title=note.title, aliases=[note.alias])
            for n, note in zip(numbers, batch, strict=True)
        )
        Article.topics.through.objects.bulk_create(
            Article.topics.through(article_id=a.pk, topic_id=t.pk)
            for a, t in zip(articles, topics, strict=True)
        )
        names_keep(Topic, topics)
        texted = [(a, note) for a, note in zip(articles, batch, strict=True)][
            : max(0, len(with_text) - first)
        ]
        revisions = ArticleRevision.objects.bulk_create(
            ArticleRevision(article=a, title=note.title, body=note.text, content_hash=a.slug)
            for a, note in texted
        )
        Passage.objects.bulk_create(
            Passage(
                revision=revision,
                article=a,
                ordinal=0,
                text=note.text,
                start=0,
                end=len(note.text),
                embedding=vectors[first + i].tolist(),
                embedded_by=embeddings.embedder(),
            )
            for i, (revision, (a, note)) in enumerate(zip(revisions, texted, strict=True))
        )
    with connection.cursor() as cursor:
        for table in (
            "garden_article",
            "garden_topic",
            "garden_name",
            "garden_article_topics",
            "garden_passage",
        ):
            cursor.execute(f"ANALYZE {table}")
    return Passage.objects.filter(article__slug__startswith="bench-note-").count()


def _gate_figures(observed: Sequence[Observed], thresholds: Thresholds) -> dict[str, Any]:
    figures = measure(observed, thresholds)
    return {
        "thresholds": figures["thresholds"],
        "refused_out_of_scope": figures["out_of_scope_refused"],
        "answered_in_scope": figures["in_scope_answered"],
        "recall_at_5": figures["recall_at_5"],
    }


def _share(flags: Iterable[bool]) -> float | None:
    values = list(flags)
    return round(sum(values) / len(values), 3) if values else None


def _why_through(item: Observed, thresholds: Thresholds) -> dict[str, Any] | None:
    """What let an out-of-scope question through the gate (its topics, counted articles and themes, by title);
    None when it was refused."""
    result = select(item.candidates, thresholds, max_articles=5, max_sources=8)
    if result.empty:
        return None
    articles = dict(
        Article.objects.filter(pk__in=[a.article_id for a in result.articles]).values_list("pk", "title")
    )
    return {
        "question": item.question.question,
        "topics": list(Topic.objects.filter(pk__in=result.topic_ids).values_list("title", flat=True)),
        "articles": [
            {
                "title": articles.get(a.article_id),
                "vector": round(a.vector_score, 3),
                "text": round(a.text_score, 3),
            }
            for a in result.articles
        ],
        "themes": len(result.theme_ids),
    }


def _audiences_write(ids: Sequence[int], written_for: list[str]) -> None:
    for first in range(0, len(ids), 5_000):
        Article.objects.filter(pk__in=ids[first : first + 5_000]).update(audiences=written_for)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE garden_article")


def _audience_case(
    in_scope: Sequence[GoldenEntry],
    vectors: npt.NDArray[np.float32],
    out_of_scope: Sequence[GoldenEntry],
    thresholds: Thresholds,
    runs: int,
    unfiltered: dict[str, float],
) -> dict[str, Any]:
    """The same garden with half of its notes for one audience of five (`BENCH_AUDIENCES`), timed for a reader
    of another (`AUDIENCE_READER`): hybrid retrieval and the refusal decision, and the filtered hybrid p50 and
    p95 over the unfiltered ones measured just before. The notes an in-scope question expects stay for
    everyone, so that the filtered retrieval finds what the unfiltered one did; the half is taken evenly from
    the rest. They are then back to the default audience (the next size counts the notes everyone reads)."""
    expected = {slug for question in in_scope for slug in question.expected_articles}
    live = list(Article.objects.live().filter(audiences=[]).order_by("pk").values_list("pk", "slug"))
    kept = sum(slug in expected for _, slug in live)
    others = [pk for pk, slug in live if slug not in expected]
    half = min(len(live) // 2, len(others))
    ids = [others[number * len(others) // half] for number in range(half)] if half else []
    _audiences_write(ids, [BENCH_AUDIENCES[0]])
    try:
        hybrid, refusal = [], []
        for _ in range(runs):
            for question, vector in zip(in_scope, vectors, strict=True):
                hybrid.append(
                    timed(hybrid_retrieve, question.question, vector, thresholds, AUDIENCE_READER)[0]
                )
            refusal += [
                timed(partial(retrieve, thresholds=thresholds, reader=AUDIENCE_READER), q.question)[0]
                for q in out_of_scope
            ]
    finally:
        _audiences_write(ids, [])
    filtered = percentiles(hybrid)
    return {
        "notes_for_another_audience": len(ids),
        "notes_kept_for_everyone_as_expected_answers": kept,
        "audiences": len(BENCH_AUDIENCES),
        "hybrid_retrieval": filtered,
        "refusal_decision": percentiles(refusal),
        "hybrid_p50_filtered_over_unfiltered": round(filtered["p50_ms"] / max(unfiltered["p50_ms"], 1e-6), 2),
        "hybrid_p95_filtered_over_unfiltered": round(filtered["p95_ms"] / max(unfiltered["p95_ms"], 1e-6), 2),
    }


def bench_notes(
    in_scope: Sequence[GoldenEntry],
    out_of_scope: Sequence[GoldenEntry],
    runs: int,
    counts: Sequence[int] = NOTE_COUNTS,
    seed: int = 7,
) -> dict[str, Any]:
    """As the garden grows to each count of notes (real-looking ones, `real_notes`), in one run: hybrid
    retrieval (in-scope questions, their vectors given) and the refusal decision (out-of-scope ones, embedding
    included) timed, p50 at the most notes over p50 at the fewest (which should stay near 1); and the gate's
    precision: the share of out-of-scope golden questions refused and of in-scope ones answered, with the
    settings' thresholds and with thresholds calibrated on the garden at that size (`retrieval_report
    --calibrate`), the latter also on halves of the golden set they were not fitted on, and with thresholds the
    garden fitted to probes of itself (`retrieval_report --self-calibrate`, no golden set). At each size too, the
    audience case (`_audience_case`): the same timings for a reader of one audience, beside the unfiltered
    ones; the gate's figures are the unfiltered garden's, measured before."""
    notes = real_notes(max(counts), with_text=min(max(counts), PASSAGE_NOTES), seed=seed)
    vectors = embeddings.embed([q.question for q in in_scope])
    thresholds = Thresholds.from_settings()
    questions = [*in_scope, *out_of_scope]
    results: list[dict[str, Any]] = []
    for count in sorted(counts):
        began = time.perf_counter()
        passages = _notes_to(count, notes)
        fill_seconds = time.perf_counter() - began
        hybrid, refusal = [], []
        for _ in range(runs):
            for question, vector in zip(in_scope, vectors, strict=True):
                hybrid.append(timed(hybrid_retrieve, question.question, vector, thresholds)[0])
            refusal += [timed(partial(retrieve, thresholds=thresholds), q.question)[0] for q in out_of_scope]
        observed = observe(questions)
        gate = _gate_figures(observed, thresholds)
        began = time.perf_counter()
        probed = (
            self_calibrate()
        )  # the garden's own probes, no golden set: measured on the golden set it never saw
        probe_seconds = time.perf_counter() - began
        audience = _audience_case(in_scope, vectors, out_of_scope, thresholds, runs, percentiles(hybrid))
        results.append(
            {
                "notes": Article.objects.live().count(),
                "notes_with_a_passage": passages,
                "fill_seconds": round(fill_seconds, 1),
                "hybrid_retrieval": percentiles(hybrid),
                "refusal_decision": percentiles(refusal),
                "audience_case": audience,
                "refused_out_of_scope": gate["refused_out_of_scope"],
                # Out-of-scope questions a topic name matched in: now, and had every stretch been a name
                # (before a name needed more than one everyday word).
                "out_of_scope_named": _share(bool(matched_topics(q.question)) for q in out_of_scope),
                "out_of_scope_named_by_any_stretch": _share(
                    Topic.objects.live_named_in(q.question).exists() for q in out_of_scope
                ),
                "answered_in_scope": gate["answered_in_scope"],
                "settings": gate,
                "calibrated": {
                    **_gate_figures(observed, calibrate(observed)),
                    "held_out": held_out(observed),
                },
                "self_calibrated": {
                    **_gate_figures(observed, probed.thresholds),
                    "probes": probed.probes,
                    "on_probes": {
                        key: probed.figures[key] for key in ("out_of_scope_refused", "in_scope_answered")
                    },
                    "seconds": round(probe_seconds, 1),
                },
                "let_through": [
                    why
                    for item in observed
                    if not item.question.in_scope and (why := _why_through(item, thresholds))
                ],
            }
        )
    # The sections after this one measure the garden as it was.
    Article.objects.filter(slug__startswith="bench-note-").delete()
    Topic.objects.filter(slug__startswith="bench-note-").delete()
    first, last = results[0], results[-1]
    # The sizes up to PASSAGE_NOTES add passages as well as names; beyond it only names: this ratio is the
    # cost of the notes alone.
    same_passages = next(r for r in results if r["notes_with_a_passage"] == last["notes_with_a_passage"])
    return {
        "notes_from": f"docstrings of {', '.join(NOTE_PACKAGES)}",
        "sizes": results,
        "hybrid_p50_most_over_fewest_with_as_many_passages": round(
            last["hybrid_retrieval"]["p50_ms"] / max(same_passages["hybrid_retrieval"]["p50_ms"], 1e-6), 2
        ),
        "hybrid_p50_most_over_fewest": round(
            last["hybrid_retrieval"]["p50_ms"] / max(first["hybrid_retrieval"]["p50_ms"], 1e-6), 2
        ),
        "audience_hybrid_p50_filtered_over_unfiltered": {
            str(r["notes"]): r["audience_case"]["hybrid_p50_filtered_over_unfiltered"] for r in results
        },
        "refusal_p50_most_over_fewest": round(
            last["refusal_decision"]["p50_ms"] / max(first["refusal_decision"]["p50_ms"], 1e-6), 2
        ),
    }
