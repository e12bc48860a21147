"""How garden text is written into a model's prompt as data (`escape_for_prompt`) and read back from what the model
wrote (`unescape_from_prompt`): shared by the answer writer (`garden/answering/synthesis/claude.py`, and the
follow-ups' condensing) and the Claude judge (`claimcheck/judges/claude.py`), so that both escape alike.
"""

from __future__ import annotations

from typing import Final

# How a prompt's data blocks write "<": the system prompts that carry such blocks say so.
ESCAPED_LT: Final = "&lt;"


def escape_for_prompt(text: str) -> str:
    """`text` (a note, a title, a question, a claim) as a prompt's data block carries it: every "<" written as
    `ESCAPED_LT`, so that nothing in it can close its block or open another and pose as the prompt's structure.

    Escaping "<" alone is enough: every block is opened and closed by a tag, and no tag starts without it."""
    return text.replace("<", ESCAPED_LT)


def unescape_from_prompt(text: str, original: str) -> str:
    """`text` a model wrote from escaped blocks, with `ESCAPED_LT` read back as "<"; kept as written when
    `original` (the unescaped text it copied from) really holds "&lt;"."""
    if ESCAPED_LT in text and ESCAPED_LT not in original:
        return text.replace(ESCAPED_LT, "<")
    return text
