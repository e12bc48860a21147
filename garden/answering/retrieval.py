"""Hybrid retrieval: pgvector cosine over passage embeddings, PostgreSQL full-text search, topic and theme signals.

Nearest-neighbour search always returns something, so a vector hit only counts above its calibrated threshold;
a full-text hit likewise. The refusal gate (`garden.answering.asking`) refuses when topics, articles and themes are all
empty. A served re-ranker, when configured, reorders the candidates between `gather` and `select` without changing
what the gate decides (`garden.answering.reranking`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from django.conf import settings
from django.db import DataError, connection
from django.db.models import Case, Value, When

from garden.answering.phrases import everyday_words, names_asked
from garden.answering.reranking import reranked
from garden.answering.synthesis.extractive import STOP_WORDS
from garden.errors import UserFacingError
from garden.languages import QUESTION_WORDS
from garden.models import Article, CalibrationSource, Passage, RetrievalCalibration, Theme, Topic
from garden.readers import ANONYMOUS, Reader
from providers import embeddings
from providers.timing import phase

CANDIDATES = 40
SOURCES_PER_ARTICLE = 3
TEXT_WEIGHT = 0.5
TOPIC_BOOST = 0.05
_LEXEME = re.compile(r"[\w.-]+")
TOPIC, THEME = 0, 1  # which of the two a row of `matched_topics_and_themes` is
ANOTHER_MODEL = (
    "The garden's passages were embedded by {index}, and questions now are by {question}: their vectors "
    "cannot be compared. An operator switches the garden over with `python manage.py reembed_garden` "
    "(or sets the embedding settings back)."
)


class EmbedderMismatch(UserFacingError):
    """The passages' vectors come from another model than the question's: searching them would be nonsense."""


@dataclass(frozen=True)
class Thresholds:
    vector: float
    text: float

    @classmethod
    def from_settings(cls) -> Thresholds:
        return cls(vector=settings.RETRIEVAL_VECTOR_THRESHOLD, text=settings.RETRIEVAL_TEXT_THRESHOLD)

    @classmethod
    def in_force(cls) -> Thresholds:
        """What the gate uses: the garden's calibration for the embedder that runs now, else the settings'."""
        calibration = calibration_in_force()
        if calibration is None:
            return cls.from_settings()
        return cls(vector=calibration.vector_threshold, text=calibration.text_threshold)


def calibration_in_force() -> RetrievalCalibration | None:
    """The latest calibration of this garden made with the embedder that runs now, one fitted on a golden set
    (`retrieval_report --calibrate`) before one fitted on probes (`--self-calibrate`, or after a big import);
    None when there is none and the settings' thresholds hold.

    A golden set wins, however old the probes' calibration beside it: its questions are the team's own, with
    the notes that answer them checked by hand, while probes are made-up questions and held-out guesses at
    what readers ask. Who keeps a golden set calibrates again with it (`--calibrate`) when the garden changed."""
    golden_first = Case(When(source=CalibrationSource.GOLDEN, then=Value(0)), default=Value(1))
    return (
        RetrievalCalibration.objects.filter(embedded_by=embeddings.embedder())
        .order_by(golden_first, "-id")
        .first()
    )


@dataclass(frozen=True)
class PassageHit:
    passage_id: int
    article_id: int
    vector_score: float
    text_score: float
    borrows: bool = False  # it holds words another note lends it (`Passage.shows`): `live_hits` checks whose

    @property
    def score(self) -> float:
        return self.vector_score + TEXT_WEIGHT * self.text_score

    def counts(self, thresholds: Thresholds) -> bool:
        """Whether this hit is strong enough to let the question past the refusal gate."""
        return self.vector_score >= thresholds.vector or self.text_score >= thresholds.text


@dataclass(frozen=True)
class ArticleHit:
    article_id: int
    score: float
    vector_score: float
    text_score: float


@dataclass
class RetrievalResult:
    topic_ids: list[int] = field(default_factory=list)
    theme_ids: list[int] = field(default_factory=list)
    articles: list[ArticleHit] = field(default_factory=list)
    sources: list[PassageHit] = field(default_factory=list)
    latency_ms: int = 0
    vector: npt.NDArray[np.float32] | None = None  # the question's embedding, which synthesis reuses

    @property
    def empty(self) -> bool:
        """True when the refusal gate must refuse: no topic, no article and no theme."""
        return not (self.topic_ids or self.articles or self.theme_ids)


def question_names(question: str) -> list[str]:
    """The stretches of the question a topic or theme name may match in (`garden.answering.phrases.names_asked`): one
    everyday word is not enough unless the question is about it."""
    return names_asked(question, stop_words=STOP_WORDS, everyday=everyday_words())


def matched_topics(
    question: str, names: Sequence[str] | None = None, *, reader: Reader = ANONYMOUS
) -> list[int]:
    """Live topics whose title or any alias appears in the question as whole words, in one of its `names`
    (default `question_names`)."""
    return matched_topics_and_themes(question, names, reader=reader)[TOPIC]


def matched_themes(
    question: str, names: Sequence[str] | None = None, *, reader: Reader = ANONYMOUS
) -> list[int]:
    """Live themes any of whose keywords appears in the question as whole words, in one of its `names`
    (default `question_names`)."""
    return matched_topics_and_themes(question, names, reader=reader)[THEME]


def matched_topics_and_themes(
    question: str, names: Sequence[str] | None = None, *, reader: Reader = ANONYMOUS
) -> tuple[list[int], list[int]]:
    """The ids of the topics and of the themes named in the question that have a live note `reader` may read,
    each by title, in one round trip: what `retrieve` needs of both."""
    names = question_names(question) if names is None else names
    rows = [
        model.objects.live_named_in(question, names, reader=reader)
        .annotate(kind=Value(kind))
        .values_list("kind", "id", "title")
        .order_by()
        for kind, model in ((TOPIC, Topic), (THEME, Theme))
    ]
    found: tuple[list[int], list[int]] = ([], [])
    for kind, pk, _ in rows[0].union(rows[1], all=True).order_by("kind", "title"):  # each by title, as apart
        found[kind].append(pk)
    return found


# The text-search configurations (`Passage.language`) of the current passages, each once, as the rows of `used`
# where `language` is not null: read by skipping along their index (`passage_language`) from one to the next, a
# probe a language however many passages there are.
LANGUAGES_USED = (
    "WITH RECURSIVE used(language) AS ("
    "(SELECT language FROM garden_passage WHERE is_current ORDER BY language LIMIT 1) UNION ALL "
    "SELECT (SELECT c.language FROM garden_passage c WHERE c.is_current AND c.language > used.language "
    "ORDER BY c.language LIMIT 1) FROM used WHERE used.language IS NOT NULL) "
)

# A question's search lexemes by the text-search configuration they were taken in ("english": [...]).
Lexemes = Mapping[str, Sequence[str]]


def question_lexemes(question: str) -> dict[str, list[str]]:
    """The question's distinct search lexemes, stemmed and without stop words as PostgreSQL sees them, in each
    language the garden's current passages are in (by its configuration's name): a passage is matched with
    those of its own, so a question finds notes written in its asker's language and the words a note in
    another language shares with it. The words a question asks with (`garden.languages.QUESTION_WORDS`) are
    left out as stop words are. A language in which the question keeps no lexeme is left out."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"{LANGUAGES_USED}SELECT used.language::text, tsvector_to_array(to_tsvector(used.language, %s)), "
            "tsvector_to_array(to_tsvector(used.language, coalesce(asking.words, ''))) "
            "FROM used LEFT JOIN unnest(%s::text[], %s::text[]) asking(language, words) "
            "ON asking.language = used.language::text WHERE used.language IS NOT NULL ORDER BY 1",
            [question, list(QUESTION_WORDS), list(QUESTION_WORDS.values())],
        )
        rows = cursor.fetchall()
    taken = {
        language: [lexeme for lexeme in found if _LEXEME.fullmatch(lexeme) and lexeme not in asking]
        for language, found, asking in rows
    }
    return {language: lexemes for language, lexemes in taken.items() if lexemes}


# The reader's audiences, inside each search's own query: the passages of notes for other audiences are left
# out as the index is read, not dropped from its results. Each candidate's article is looked up in the index of
# the notes not for everyone (`article_for_audiences`): one probe a candidate, however many such notes there are
# (an array of them, read once per query, cost a scan of it a candidate: 2.2x and 2.4x the unfiltered p50 in two
# runs with half of 50,000 notes for another audience, docs/performance.md). A passage holding words another
# note lends it (`Passage.shows`, decision 0006) is theirs only if that note is: looked up for those few only.
_NOT_THEIRS = (
    "AND NOT EXISTS (SELECT FROM garden_article a WHERE a.id = {passages}.article_id "
    "AND a.audiences <> '{{}}' AND NOT a.audiences && %s::varchar[]) "
    "AND ({passages}.shows = '{{}}' OR NOT EXISTS (SELECT FROM garden_article a "
    "WHERE a.path = ANY({passages}.shows) AND (a.withheld_at IS NOT NULL "
    "OR (a.audiences <> '{{}}' AND NOT a.audiences && %s::varchar[])))) "
)


def audience_filter(reader: Reader, passages: str = "garden_passage") -> tuple[str, list[Any]]:
    """The clause (and its parameters) that keeps `reader`'s passages (`passages`: the table's name or alias in
    the query): none for a reader of every audience."""
    if reader.reads_all:
        return "", []
    audiences = sorted(reader.audiences)
    return _NOT_THEIRS.format(passages=passages), [audiences, audiences]


def _vector_search(reader: Reader) -> str:
    return (
        "SET LOCAL hnsw.ef_search = %s; "
        f"SELECT id, article_id FROM garden_passage WHERE is_current {audience_filter(reader)[0]}"
        "ORDER BY embedding <=> %s::vector LIMIT %s"
    )


def _text_search(reader: Reader, languages: int) -> str:
    """The passages holding every lexeme of the question in their own language, of each of `languages` through
    the GIN index, best `ts_rank_cd` first."""
    each = (
        "(SELECT c.id, ts_rank_cd(c.search_vector, q) AS rank FROM garden_passage c, to_tsquery('simple', %s) q "
        f"WHERE c.is_current AND c.language = %s::regconfig AND c.search_vector @@ q {audience_filter(reader, 'c')[0]}"
        "ORDER BY rank DESC LIMIT %s)"
    )
    return f"SELECT id FROM ({' UNION ALL '.join([each] * languages)}) found ORDER BY rank DESC LIMIT %s"


def _text_params(lexemes: Lexemes, reader: Reader) -> list[Any]:
    return [
        *(
            parameter
            for language, taken in lexemes.items()
            for parameter in (_text_query(taken), language, *audience_filter(reader)[1], CANDIDATES)
        ),
        CANDIDATES,
    ]


def _vector_params(
    vector: npt.NDArray[np.float32], limit: int, ef_search: int | None, reader: Reader = ANONYMOUS
) -> list[Any]:
    breadth = max(settings.RETRIEVAL_EF_SEARCH if ef_search is None else ef_search, limit)
    return [breadth, *audience_filter(reader)[1], _literal(vector), limit]


def _text_query(lexemes: Sequence[str]) -> str:
    return " & ".join(f"'{lexeme}'" for lexeme in lexemes)


def vector_candidates(
    vector: npt.NDArray[np.float32],
    limit: int = CANDIDATES,
    *,
    ef_search: int | None = None,
    reader: Reader = ANONYMOUS,
) -> list[tuple[int, int]]:
    """(passage id, article id) of the nearest current passages `reader` may read, nearest first, through the HNSW
    index.

    `ef_search` (default `RETRIEVAL_EF_SEARCH`, never below `limit`) is the index's search breadth. The
    similarities are left to `passage_scores`: computing them here would read every result's vector again from
    its TOAST table.
    """
    with connection.cursor() as cursor:
        # One round trip instead of four (BEGIN, SET LOCAL, SELECT, COMMIT): PostgreSQL runs a query string of
        # several statements as one transaction, so SET LOCAL holds for this SELECT (inside an atomic block,
        # until that block's transaction ends, as any SET LOCAL does).
        cursor.execute(_vector_search(reader), _vector_params(vector, limit, ef_search, reader))
        cursor.nextset()
        return [(int(passage_id), int(article_id)) for passage_id, article_id in cursor.fetchall()]


def passage_candidates(
    vector: npt.NDArray[np.float32], lexemes: Lexemes, *, reader: Reader = ANONYMOUS
) -> list[int]:
    """The ids of `vector_candidates` then of the passages that hold every lexeme taken in their language (best
    `ts_rank_cd` first, through the GIN index), each once, in one round trip; only passages `reader` may read."""
    if not lexemes:
        return list(dict.fromkeys(passage_id for passage_id, _ in vector_candidates(vector, reader=reader)))
    with connection.cursor() as cursor:
        cursor.execute(
            f"{_vector_search(reader)}; {_text_search(reader, len(lexemes))}",
            [*_vector_params(vector, CANDIDATES, None, reader), *_text_params(lexemes, reader)],
        )
        cursor.nextset()
        nearest = [int(row[0]) for row in cursor.fetchall()]
        cursor.nextset()
        return list(dict.fromkeys([*nearest, *(int(row[0]) for row in cursor.fetchall())]))


def passage_scores(
    passage_ids: Sequence[int], vector: npt.NDArray[np.float32], lexemes: Lexemes
) -> list[PassageHit]:
    """Both scores of the given passages: cosine similarity, and the share of the question's lexemes, taken in
    the passage's language, that it holds (none in a language the question kept no lexeme in).

    Coverage rather than a rank: a passage sharing one common word with an unrelated question scores low.
    """
    if not passage_ids:
        return []
    coverage = "".join(
        "WHEN %s::regconfig THEN ("
        + " + ".join(["(search_vector @@ to_tsquery('simple', %s))::int"] * len(taken))
        + ")::float / %s "
        for taken in lexemes.values()
    )
    each: list[Any] = [
        parameter
        for language, taken in lexemes.items()
        for parameter in (language, *(f"'{lexeme}'" for lexeme in taken), len(taken))
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, article_id, 1 - (embedding <=> %s::vector), "
            f"{f'CASE language {coverage}ELSE 0 END' if coverage else '0'}, embedded_by, shows <> '{{}}' "
            "FROM garden_passage WHERE id = ANY(%s)",
            [_literal(vector), *each, list(passage_ids)],
        )
        rows = cursor.fetchall()
    embedders_check({row[4] for row in rows})
    return [PassageHit(int(a), int(b), float(c), float(d), bool(e)) for a, b, c, d, _, e in rows]


def embedders_check(made_by: set[str]) -> None:
    """EmbedderMismatch when any of these embedders (`Passage.embedded_by`) made vectors of another model than
    the configured embedder's (`providers.embeddings.same_model`): read off the passages a search found, so
    checking costs no query."""
    question = embeddings.embedder()
    other = sorted(name for name in made_by if not embeddings.same_model(name, question))
    if other:
        raise EmbedderMismatch(ANOTHER_MODEL.format(index=", ".join(other), question=question))


def _literal(vector: npt.NDArray[np.float32]) -> str:
    return "[" + ",".join(f"{x:.7f}" for x in vector.tolist()) + "]"


def live_hits(hits: Sequence[PassageHit], reader: Reader = ANONYMOUS) -> list[PassageHit]:
    """The hits in articles live for `reader` (`ArticleQuerySet.live`) holding no words a note not theirs lends
    (`PassageQuerySet.unreadable`), in their order. `Passage.is_current` and the searches' audience filter
    already leave out what is withheld, retired or not theirs; this holds the rule itself, so no way of writing a
    passage can let a withheld note's text through (an edit in the admin once did)."""
    if not hits:
        return []
    live = set(
        Article.objects.live(reader).filter(pk__in={h.article_id for h in hits}).values_list("pk", flat=True)
    )
    borrowing = [h.passage_id for h in hits if h.borrows]  # read with their scores: no query when none does
    hidden = (
        set(Passage.objects.filter(pk__in=borrowing).unreadable(reader).values_list("pk", flat=True))
        if borrowing
        else set()
    )
    return [hit for hit in hits if hit.article_id in live and hit.passage_id not in hidden]


@dataclass
class Candidates:
    """Everything retrieval found for a question before thresholds are applied."""

    topic_ids: list[int]
    theme_ids: list[int]
    hits: list[PassageHit]
    topic_article_ids: set[int]
    vector: npt.NDArray[np.float32]
    reranked_by: str = ""  # the re-ranker's model when it ordered `hits`; empty: the hybrid order


def gather(
    question: str, vector: npt.NDArray[np.float32] | None = None, *, reader: Reader = ANONYMOUS
) -> Candidates:
    """Topics, themes and candidate passages (vector and full-text) `reader` may read, each with both scores,
    best first."""
    if vector is None:
        vector = embeddings.embed_one(question)
    names = question_names(question)
    topic_ids, theme_ids = matched_topics_and_themes(question, names, reader=reader)
    lexemes = question_lexemes(question)
    try:
        found = passage_candidates(vector, lexemes, reader=reader)
    except DataError as error:  # the column holds vectors of another size than the question's
        raise EmbedderMismatch(
            ANOTHER_MODEL.format(index=f"another model ({error})".strip(), question=embeddings.embedder())
        ) from error
    hits = live_hits(passage_scores(found, vector, lexemes), reader)
    topic_article_ids = (
        set(Article.objects.live(reader).filter(topics__in=topic_ids).values_list("id", flat=True))
        if topic_ids
        else set()
    )
    ranked = sorted(
        hits, key=lambda h: h.score + TOPIC_BOOST * (h.article_id in topic_article_ids), reverse=True
    )
    return Candidates(topic_ids, theme_ids, ranked, topic_article_ids, vector)


def select(
    candidates: Candidates, thresholds: Thresholds, *, max_articles: int, max_sources: int
) -> RetrievalResult:
    """Apply the thresholds: the counted articles (best first) and the passages to give synthesis as sources."""
    result = RetrievalResult(topic_ids=candidates.topic_ids, theme_ids=candidates.theme_ids)
    best: dict[int, PassageHit] = {}  # each counted article's best hit, the first `max_articles` of them
    for hit in candidates.hits:
        if len(best) >= max_articles:
            break
        if hit.article_id not in best and hit.counts(thresholds):
            best[hit.article_id] = hit
    result.articles = [ArticleHit(a, h.score, h.vector_score, h.text_score) for a, h in best.items()]
    # Sources come from counted articles; when only topics matched, from the articles of those topics.
    allowed = {a.article_id for a in result.articles} or candidates.topic_article_ids
    per_article: dict[int, int] = {}
    for hit in candidates.hits:
        if len(result.sources) >= max_sources:
            break
        if hit.article_id in allowed and per_article.get(hit.article_id, 0) < SOURCES_PER_ARTICLE:
            per_article[hit.article_id] = per_article.get(hit.article_id, 0) + 1
            result.sources.append(hit)
    return result


@phase("retrieval")
def retrieve(
    question: str,
    *,
    vector: npt.NDArray[np.float32] | None = None,
    thresholds: Thresholds | None = None,
    reader: Reader = ANONYMOUS,
) -> RetrievalResult:
    """Topics, themes, counted articles (best first) and the passages to give synthesis as numbered sources, of
    what `reader` may read: the refusal gate sees nothing of another audience's notes. A configured re-ranker
    orders them (`reranked`); the gate's decision is the same with it or without."""
    began = time.perf_counter()
    thresholds = thresholds or Thresholds.in_force()
    candidates = reranked(question, gather(question, vector, reader=reader), thresholds)
    result = select(
        candidates,
        thresholds,
        max_articles=settings.RETRIEVAL_MAX_ARTICLES,
        max_sources=settings.RETRIEVAL_MAX_SOURCES,
    )
    if not result.sources and candidates.topic_article_ids:
        result.sources = _topic_sources(
            candidates.topic_article_ids, candidates.vector, settings.RETRIEVAL_MAX_SOURCES, reader
        )
    result.vector = candidates.vector
    result.latency_ms = round((time.perf_counter() - began) * 1000)
    return result


def _topic_sources(
    article_ids: set[int], vector: npt.NDArray[np.float32], limit: int, reader: Reader
) -> list[PassageHit]:
    """The passages of the matched topics' articles nearest the question, of those `reader` may read (not one
    holding words a note not theirs lends it)."""
    theirs, audiences = audience_filter(reader)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, article_id, 1 - (embedding <=> %s::vector) AS s FROM garden_passage "
            f"WHERE is_current AND article_id = ANY(%s) {theirs}ORDER BY s DESC LIMIT %s",
            [_literal(vector), list(article_ids), *audiences, limit],
        )
        return [PassageHit(int(a), int(b), float(c), 0.0) for a, b, c in cursor.fetchall()]
