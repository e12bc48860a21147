"""What every judge reads and returns: numbered sources, and a ruling on one claim. Pure Python: no Django."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A numbered source; `index` is the `[n]` the answer uses (1-based). `context` is the article title and the
    heading above the passage: a judge reads it to know what the passage is about, never quotes it."""

    index: int
    text: str
    superseded: bool = False
    context: str = ""


@dataclass(frozen=True)
class Ruling:
    """A judge's ruling on one claim; `quote` is verbatim source text (empty when there is none)."""

    status: str
    quote: str
    source_index: int | None
    confidence: float
    flags: tuple[str, ...]
