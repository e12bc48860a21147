"""Checking text against sources: split it into claims, judge them with the panel, score the verdict.

`text_check` is the heart of every verification, of `manage.py check_text` and of the bench; `garden_check`
checks arbitrary text (the API's fact-check) against passages retrieved from the garden for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from claimcheck import claims as claim_splitter
from claimcheck.critics.citation_gate.paths import audit_paths
from claimcheck.judges.types import Source
from claimcheck.panel import PanelConfig, PanelOutcome, run_panel
from claimcheck.terms import JudgeMode
from claimcheck.verdict import Scored, score
from garden.answering.retrieval import EmbedderMismatch, retrieve
from garden.errors import UserFacingError
from garden.models import Passage
from garden.readers import ANONYMOUS, Reader
from garden.selectors import passages_shown
from garden.storable import storable
from providers.embeddings import EmbeddingError
from text.markup import strip_citations
from verifier.budget import DailyBudget
from verifier.claude_adapter import claude_client, served_juror
from verifier.judge_parameters import judge_parameters_use
from verifier.models import SpendPurpose
from verifier.source_tree import critic_source_tree
from verifier.sources import passage_context

EMPTY_TEXT = "Please give some text to check."
TEXT_TOO_LONG = "Text to check is limited to {limit:,} characters; this has {length:,}."
# Sources given with a text instead of the garden's: as many as retrieval would give at most, and then some.
SOURCES_MAX = 20
SOURCES_COUNT = "Give between 1 and {limit} sources to check against, or none to check against the garden."
SOURCE_EMPTY = "Source {number} is empty."
SOURCE_TOO_LONG = "A source is limited to {limit:,} characters; source {number} has {length:,}."


class CheckError(UserFacingError):
    """Text that cannot be checked (empty or too long)."""


@dataclass(frozen=True)
class Checked:
    """Text judged by the panel: its claims, the outcome and the scores."""

    claims: list[claim_splitter.Sentence]
    outcome: PanelOutcome
    scored: Scored
    judge_available: bool


def panel_config(
    purpose: SpendPurpose, mode: JudgeMode | None = None, *, anonymous: bool = False
) -> PanelConfig:
    """The panel as configured (or in `mode`), its Claude spending booked to `purpose` in the daily budget (for
    an `anonymous` visitor, within their allowance). A served juror (`OPENAI_JUROR_MODEL`) sits in the Claude
    juror's place."""
    served = served_juror()
    return PanelConfig(
        mode=mode or JudgeMode(settings.VERIFIER_MODE),
        claude=claude_client(),
        served=served,
        juror_model=settings.OPENAI_JUROR_MODEL if served is not None else settings.CLAUDE_JUROR_MODEL,
        tiebreaker_model=settings.CLAUDE_TIEBREAKER_MODEL,
        escalate_below=settings.VERIFIER_ESCALATE_BELOW,
        budget=DailyBudget(purpose, anonymous=anonymous),
    )


def text_check(
    text: str,
    sources: Sequence[Source],
    *,
    purpose: SpendPurpose,
    mode: JudgeMode | None = None,
    anonymous: bool = False,
    question: str | None = None,
) -> Checked:
    """Split `text` into claims and judge them against `sources` (the heart of every verification); given the
    `question` the text answers, decide too whether it answers it (`PanelOutcome.answers_question`), which a
    grounded verdict needs for its ✓.

    Each Claude judgement of the panel goes into the daily budget's ledger for `purpose`. The local judge
    decides with the parameters installed in this process: callers with a database install the active
    version first (`judge_parameters_use`); `check_text` on benchmarks keeps the committed params.json.
    """
    config = panel_config(purpose, mode, anonymous=anonymous)
    claims = claim_splitter.split_claims(text)
    outcome = run_panel(claims, sources, config, question=question)
    scored = score(
        [v.status for v in outcome.finals],
        [v.confidence for v in outcome.finals],
        answers_question=outcome.answers_question,
    )
    # The judge asked for ran: the local one when that is the mode, else Claude (the label stands either way).
    judge_available = config.mode == JudgeMode.LOCAL or not outcome.local_only
    return Checked(claims, outcome, scored, judge_available)


def check_text_clean(text: str | None) -> str:
    """The text to fact-check, its `[n]` markers removed (in arbitrary text they do not refer to the retrieved
    passages); raises CheckError when it is empty or longer than CHECK_MAX_CHARS.

    The length is checked first, on the text as sent: nothing else may run over an over-long text.
    """
    text = text or ""
    limit = settings.CHECK_MAX_CHARS
    if len(text) > limit:
        raise CheckError(TEXT_TOO_LONG.format(limit=limit, length=len(text)))
    text = strip_citations(storable(text))
    if not text:
        raise CheckError(EMPTY_TEXT)
    return text


def garden_check(
    text: str | None,
    *,
    mode: JudgeMode | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
    reader: Reader = ANONYMOUS,
) -> tuple[Checked, list[Passage]]:
    """Fact-check any text against the part of the garden `reader` may read: retrieve passages for it, then
    judge its claims against them (with the panel as configured, or in `mode`, e.g. `JudgeMode.LOCAL`).
    `claude_slot` is held while a panel with Claude judges; what it raises (none free) comes out of here."""
    text = check_text_clean(text)
    judge_parameters_use()
    try:
        found = retrieve(text, reader=reader)
    except (
        EmbedderMismatch,
        EmbeddingError,
    ) as error:  # the garden cannot be searched now: said, nothing judged
        raise CheckError(str(error)) from error
    passages_by_id = Passage.objects.select_related("article", "revision").in_bulk(
        [hit.passage_id for hit in found.sources]
    )
    passages = [passages_by_id[hit.passage_id] for hit in found.sources]
    # Judged as the reader reads them: a link to a note not theirs names nothing, nor tells whether a claim does.
    shown = passages_shown(passages, reader)
    sources = [
        Source(index=number, text=shown[passage.pk], context=passage_context(passage))
        for number, passage in enumerate(passages, start=1)
    ]
    return _checked_in_slot(text, sources, mode, claude_slot), passages


def sources_check(
    text: str | None,
    sources: Sequence[str],
    *,
    mode: JudgeMode | None = None,
    claude_slot: AbstractContextManager[object] | None = None,
) -> Checked:
    """Fact-check any text against the given `sources` instead of the garden (numbered from 1, in order), as
    `garden_check` does. Raises CheckError for an empty or over-long text, for none or too many sources, and for
    a source that is empty or longer than CHECK_MAX_CHARS."""
    text = check_text_clean(text)
    if not sources or len(sources) > SOURCES_MAX:
        raise CheckError(SOURCES_COUNT.format(limit=SOURCES_MAX))
    limit = settings.CHECK_MAX_CHARS
    given = []
    for number, source in enumerate(sources, start=1):
        if len(source) > limit:
            raise CheckError(SOURCE_TOO_LONG.format(number=number, limit=limit, length=len(source)))
        cleaned = storable(source).strip()
        if not cleaned:
            raise CheckError(SOURCE_EMPTY.format(number=number))
        given.append(Source(index=number, text=cleaned))
    judge_parameters_use()
    return _checked_in_slot(text, given, mode, claude_slot)


def path_citations_audit(text: str) -> list[dict[str, Any]]:
    """The text's `path:line - description` citations, each audited by the citation gate against the source
    tree the operator named (CRITIC_SOURCE_TREE), as an answer's are: verified, corrected or dropped, with the
    reason (a line past the file's end is dropped as line-missing). No tree named, or one refused for being or
    holding a garden (`verifier.source_tree`): each is dropped as no-source-tree, and no file of the server is
    read for it."""
    return [item.as_dict() for item in audit_paths(text, critic_source_tree())]


def _checked_in_slot(
    text: str,
    sources: Sequence[Source],
    mode: JudgeMode | None,
    claude_slot: AbstractContextManager[object] | None,
) -> Checked:
    """`text_check` for a fact-check, holding `claude_slot` while a panel with Claude judges."""
    with_claude = (mode or JudgeMode(settings.VERIFIER_MODE)) != JudgeMode.LOCAL and (
        claude_client() is not None or served_juror() is not None
    )
    with claude_slot if claude_slot is not None and with_claude else nullcontext():
        return text_check(text, sources, purpose=SpendPurpose.CHECK, mode=mode)
