"""Answer synthesis from numbered sources: Claude when an API key is set, else the local extractive synthesiser."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from garden.claude_api import claude_config
from garden.timing import phase


@dataclass(frozen=True)
class SourceText:
    """Source `[number]` as the synthesiser sees it."""

    number: int
    title: str
    text: str


@dataclass(frozen=True)
class Synthesis:
    text: str
    generator: str
    model: str = ""
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = Decimal(0)
    latency_ms: int = 0


@phase("synthesis")
def synthesize(
    question: str, sources: Sequence[SourceText], question_vector: npt.NDArray[np.float32] | None = None
) -> Synthesis:
    """Answer `question` from `sources`, citing them as [n]. Never raises for an API failure: see `error`.
    `question_vector` is the question's embedding when retrieval has made it already."""
    from garden.synthesis import claude, extractive

    config = claude_config()
    if config is not None:
        return claude.synthesize(question, sources, config)
    return extractive.synthesize(question, sources, question_vector)
