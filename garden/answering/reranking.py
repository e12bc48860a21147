"""A served re-ranker's order for a question's candidate passages, between `gather` and `select`.

It only reorders. The refusal gate still reads the hybrid scores (`PassageHit.counts`: a hit counts above the
calibrated thresholds, whatever the re-ranker thinks of it), so a re-ranker cannot let a question through on its
own, nor bring in an article that no hit counted for; what it changes is which counted articles come first and
which of their passages become the sources, source [1] first. A question nothing counts for is not sent at all:
the gate refuses it whichever the order. The top `RERANK_CANDIDATES` are reordered, the rest follow as they were;
when the re-ranker fails, the log says why and the hybrid order stands, so nothing is lost but the re-ranking.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

from garden.models import Passage
from providers.rerank import RerankConfig, RerankError, rerank, rerank_config
from providers.timing import phase

if TYPE_CHECKING:  # retrieval calls this module: only its types are needed here
    from garden.answering.retrieval import Candidates, Thresholds

logger = logging.getLogger(__name__)

FELL_BACK = "The re-ranker {model} at {url} failed: {reason}. The passages keep the hybrid order."


def reranked(
    question: str, candidates: Candidates, thresholds: Thresholds, config: RerankConfig | None = None
) -> Candidates:
    """`candidates` with their top passages in the order the re-ranker (`config`, default the settings')
    gives, `reranked_by` naming it; unchanged when none is configured, when nothing would pass the gate at
    `thresholds`, or when it fails (logged as `FELL_BACK`)."""
    config = config or rerank_config()
    if config is None or not _passes(candidates, thresholds):
        return candidates
    top = candidates.hits[: config.candidates]
    if len(top) < 2:
        return candidates
    texts = dict(Passage.objects.filter(pk__in=[hit.passage_id for hit in top]).values_list("pk", "text"))
    try:
        with phase("rerank"):
            order = rerank(config, question, [texts.get(hit.passage_id, "") for hit in top])
    except RerankError as err:
        logger.warning(FELL_BACK.format(model=config.model, url=config.url, reason=err))
        return candidates
    hits = [top[index] for index in order] + candidates.hits[config.candidates :]
    return replace(candidates, hits=hits, reranked_by=config.model)


def _passes(candidates: Candidates, thresholds: Thresholds) -> bool:
    """Whether the gate lets the question through at `thresholds` (`RetrievalResult.empty` is false)."""
    return bool(
        candidates.topic_ids or candidates.theme_ids or any(hit.counts(thresholds) for hit in candidates.hits)
    )
