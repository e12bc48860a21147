"""Text from outside (a request, a JSONL file) made fit to store, embed and send on."""

from __future__ import annotations

import re

# In a Python string, a code point in this range is half of a surrogate pair standing alone (JSON can escape
# one as "\udcff"); UTF-8, PostgreSQL and the tokenizer cannot hold it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` without NUL characters (PostgreSQL text cannot hold them) and with every lone surrogate
    replaced by U+FFFD, the replacement character."""
    return _LONE_SURROGATE.sub("\ufffd", text.replace("\x00", ""))
