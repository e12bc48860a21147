"""What every judge reads and returns: numbered sources, and a ruling on one claim. Pure Python: no Django."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A numbered source; `index` is the `[n]` the answer uses (1-based)."""

    index: int
    text: str
    superseded: bool = False


@dataclass(frozen=True)
class Ruling:
    """A judge's ruling on one claim; `quote` is verbatim source text (empty when there is none)."""

    status: str
    quote: str
    source_index: int | None
    confidence: float
    flags: tuple[str, ...]
