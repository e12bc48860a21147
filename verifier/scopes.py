"""What a personal API token may do, defined once: its scopes, chosen when it is made. The model's field, the
tokens page, the API and the MCP tools read these names from here. Pure Python: no Django."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class TokenScope(StrEnum):
    READ = "read"
    ASK = "ask"
    CHECK = "check"

    @property
    def label(self) -> str:
        return SCOPE_LABELS[self]


SCOPE_LABELS: Final[dict[TokenScope, str]] = {
    TokenScope.READ: "Read: search the garden and read its articles",
    TokenScope.ASK: "Ask: ask and follow up, read answers and verdicts, mark answers, report claims",
    TokenScope.CHECK: "Check: fact-check a text",
}
# What a new token may do unless its owner chooses otherwise: what a script asking the garden needs. Checking
# text costs more per call and is asked for by name.
DEFAULT_SCOPES: Final[tuple[TokenScope, ...]] = (TokenScope.READ, TokenScope.ASK)
