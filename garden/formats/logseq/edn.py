"""A small reader of EDN, the notation of Logseq's `config.edn`, for the few keys the import reads."""

from __future__ import annotations

import re
from typing import Any

EDN_MAX_DEPTH = 64  # a config nested deeper is not Logseq's and would only exhaust the reader


class EdnError(ValueError):
    """Text the small EDN reader cannot read."""


_EDN_TOKEN = re.compile(
    r"""[\s,]+|;[^\n]*|"(?:[^"\\]|\\.)*+"|\#"(?:[^"\\]|\\.)*+"|\#_|\#\{|[\[\]{}()]|[^\s,;\[\]{}()"]+""",
    re.DOTALL,
)
_CLOSE = {"[": "]", "(": ")", "{": "}", "#{": "}"}


def edn_read(text: str) -> Any:
    """The first form of an EDN text as Python: maps are dicts (keys that are collections are left out),
    vectors, lists and sets are lists, keywords are strings with their colon (`:file/name-format`), strings
    are strings, numbers, `true`, `false` and `nil` their values, tagged literals their value. EdnError
    when the text is not EDN."""
    tokens = [
        token for token in _EDN_TOKEN.findall(text) if token.strip(" \t\r\n,") and not token.startswith(";")
    ]
    if "".join(_EDN_TOKEN.findall(text)) != text:
        raise EdnError("characters that are not EDN")
    position = 0

    def form(depth: int) -> Any:
        nonlocal position
        if depth > EDN_MAX_DEPTH:
            raise EdnError("nested too deeply")
        if position >= len(tokens):
            raise EdnError("it ends inside a form")
        token = tokens[position]
        position += 1
        if token == "#_":
            form(depth + 1)
            return form(depth)
        if token in _CLOSE:
            items: list[Any] = []
            while position < len(tokens) and tokens[position] != _CLOSE[token]:
                if tokens[position] == "#_":
                    position += 1
                    form(depth + 1)
                    continue
                items.append(form(depth + 1))
            if position >= len(tokens):
                raise EdnError(f"a '{token}' is never closed")
            position += 1
            if token != "{":
                return items
            if len(items) % 2:
                raise EdnError("a map has a key without a value")
            pairs = zip(items[::2], items[1::2], strict=True)
            return {key: value for key, value in pairs if isinstance(key, str | int | float | bool)}
        if token in ")]}":
            raise EdnError(f"an unexpected '{token}'")
        if token.startswith('"'):
            return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), token[1:-1])
        if token.startswith("#") and not token.startswith('#"'):
            return form(depth + 1)  # a tagged literal (`#inst "..."`): its value
        return {"true": True, "false": False, "nil": None}.get(token, _number(token))

    return form(0)


def _number(token: str) -> Any:
    try:
        return int(token)
    except ValueError:
        try:
            return float(token)
        except ValueError:
            return token
