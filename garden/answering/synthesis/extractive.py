"""The local extractive synthesiser: the answer is the source sentences that best answer the question.

Sentences are copied verbatim (bullet markers aside) and each carries the `[n]` of its source, so every claim
can be checked against its passage. The first is the one that says what the question takes as given
(`claimcheck.answerability`), of the best-ranked few; when none says it, the notes are near the question but do
not answer it, and the answer is an abstention. No model is called beyond the local embedding model and the
local judge.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.utils.module_loading import import_string

from garden.answering.synthesis import SourceText, Synthesis, abstaining
from garden.models import Generator
from garden.passages import Span, sentence_spans
from providers import embeddings
from text.answer_kinds import asked_kinds, gives_kind
from text.markup import LINK, WIKILINK
from text.words import STOP_WORDS as SHARED_STOP_WORDS
from text.words import word_set

MAX_SENTENCES = 3
MIN_SCORE = 0.25
LEXICAL_WEIGHT = 0.35
# The best-ranked sentences of which the one that answers is chosen: on SQuAD 2.0's "Computational complexity
# theory" (`python -m bench --only answerability`) the answering sentence is among the first four nearly as often
# as among the first six, and a longer list lets more near-misses pass for answers.
JUDGED_SENTENCES = 4
ANSWER_KIND_WEIGHT = 0.2
# Markup a sentence still holds once `plain` has read its links and emphasis: a link cut off by the passage's edge
# ("Config](https://...)"), an embed, a block reference, a property. Such a sentence is not text as its page
# shows it, so it is never an answer's.
_MARKUP_LEFT = re.compile(r"\]\(|\[\[|\]\]|\{\{|\}\}|\(\(|\)\)|^\S+::")
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-{3,}[\s:|-]*$")
_BULLET = re.compile(r"^(?:[-*+]\s+|\d+[.)]\s+|#+\s+|>\s*)")
_CONTENT_WORD = re.compile(r"[a-z0-9£$][a-z0-9.,£$%-]*[a-z0-9%]|[a-z0-9]")
# Function words that a question and a sentence share without sharing a subject: the shared stop words of
# text.words and a few more. Smaller than the critics' and the answer scoring's lists on purpose (and apart from
# the local judge's, an input to its fitted parameters): these lists were tuned separately, and growing this one
# would change which sentences the extractive answers choose.
STOP_WORDS = SHARED_STOP_WORDS | word_set("every many much no not one whose")


@dataclass(frozen=True)
class _Candidate:
    number: int
    text: str
    position: int
    title: str  # of the article it comes from, which a short sentence ("Total length 196 m.") is about


def plain(markdown: str) -> str:
    """A sentence without Markdown markup: wikilinks become their label, emphasis and code marks go."""
    text = WIKILINK.sub(lambda m: (m["label"] or m["target"]).strip(), markdown)
    text = LINK.sub(r"\1", text)
    return re.sub(r"(\*\*|__|\*|`)(.+?)\1", r"\2", text)


def content_words(text: str) -> set[str]:
    return {w.strip(".,") for w in _CONTENT_WORD.findall(text.lower())} - STOP_WORDS


def _candidates(sources: Sequence[SourceText]) -> list[_Candidate]:
    found = []
    for source in sources:
        for position, span in enumerate(sentence_spans(source.text)):
            sentence = plain(_row_read(source.text, span) or _BULLET.sub("", span.of(source.text)).strip())
            # Headings, table rows but as read, fragments of lists ("a 1:48 scale model ...;") make poor sentences.
            fragment = not sentence[:1].isupper() and not sentence[:1].isdigit()
            # A short sentence counts when it carries a figure ("Total length 196 m.").
            short = len(sentence) < (12 if any(c.isdigit() for c in sentence) else 25)
            if source.text[span.start] == "#" or short or "|" in sentence or fragment:
                continue
            if sentence.endswith((";", ":", ",")) or _MARKUP_LEFT.search(sentence):
                continue
            found.append(_Candidate(source.number, sentence, position, source.title))
    return found


def _row_read(text: str, span: Span) -> str | None:
    """A table's row read as a sentence, its first cell naming it: "| Life membership | £450.00 |" reads "Life
    membership: £450.00"; None for anything else, a table's heading row and its rule included."""
    row = _TABLE_ROW.match(span.of(text))
    if row is None or _TABLE_RULE.match(row[0]):
        return None
    following = text[span.end :].lstrip("\n").split("\n", 1)[0]
    cells = [cell.strip() for cell in row[1].split("|") if cell.strip()]
    if _TABLE_RULE.match(following) or len(cells) < 2:
        return None
    return f"{cells[0]}: {', '.join(cells[1:])}"


def _gives_kind(question: str, candidates: Sequence[_Candidate]) -> npt.NDArray[np.float64]:
    """1 for each candidate that gives the kind of answer the question asks for, else 0."""
    kinds = asked_kinds(question)
    return np.array([float(gives_kind(kinds, c.text)) for c in candidates])


# What an answer says when the served embedding model fails as the local synthesiser ranks its sentences.
EMBEDDING_FAILED = "The answer could not be written: {error} Please try again."


def _with_citation(sentence: str, number: int) -> str:
    sentence = sentence.rstrip()
    end = sentence[-1] if sentence[-1] in ".!?" else "."
    body = sentence[:-1] if sentence[-1] in ".!?" else sentence
    return f"{body} [{number}]{end}"


def _ranked(
    question: str, candidates: Sequence[_Candidate], question_vector: npt.NDArray[np.float32] | None
) -> tuple[list[int], npt.NDArray[np.float32]]:
    """The candidates above MIN_SCORE, best first, and their vectors."""
    vectors = np.vstack(
        [
            embeddings.embed_one(question) if question_vector is None else question_vector,
            embeddings.embed_cached([f"{c.title}: {c.text}" for c in candidates]),
        ]
    )
    semantic = vectors[1:] @ vectors[0]
    asked = content_words(question)
    lexical = np.array(
        [len(asked & content_words(f"{c.title} {c.text}")) / max(len(asked), 1) for c in candidates]
    )
    scores = semantic + LEXICAL_WEIGHT * lexical + ANSWER_KIND_WEIGHT * _gives_kind(question, candidates)
    return [int(i) for i in np.argsort(-scores) if scores[i] >= MIN_SCORE], vectors[1:]


def synthesize(
    question: str, sources: Sequence[SourceText], question_vector: npt.NDArray[np.float32] | None = None
) -> Synthesis:
    began = time.perf_counter()
    candidates = _candidates(sources)
    try:
        ranked, vectors = _ranked(question, candidates, question_vector) if candidates else ([], np.empty(0))
    except (
        embeddings.EmbeddingError
    ) as error:  # a served embedder failing after retrieval: said, never raised
        failed = EMBEDDING_FAILED.format(error=error)
        return Synthesis(
            "", Generator.EXTRACTIVE, error=failed, latency_ms=round((time.perf_counter() - began) * 1000)
        )
    judged = ranked[:JUDGED_SENTENCES]
    answering = import_string(settings.ANSWERING_SENTENCE)  # `claimcheck.answerability.answering`
    answer = (
        answering(question, [(candidates[i].text, candidates[i].title) for i in judged]) if judged else None
    )
    if answer is None:
        written = Synthesis("", Generator.EXTRACTIVE, latency_ms=round((time.perf_counter() - began) * 1000))
        return abstaining(written, sources)
    chosen = [judged[answer.sentence]]
    for index in ranked:
        if len(chosen) == MAX_SENTENCES:
            break
        if all(float(vectors[index] @ vectors[other]) <= 0.9 for other in chosen):
            chosen.append(index)
    text = " ".join(_with_citation(candidates[i].text, candidates[i].number) for i in chosen)
    return Synthesis(text, Generator.EXTRACTIVE, latency_ms=round((time.perf_counter() - began) * 1000))
