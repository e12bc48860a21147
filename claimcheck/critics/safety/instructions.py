"""Whether a phrase the safety rules matched is an instruction to the reader, and not advice against it.

An instruction is an imperative ("Delete all records."), a modal aimed at the reader ("you should ..."), a
recommendation ("the fix is to ...", "I suggest ...", "try disabling ..."), or a purpose clause whose main
clause is one ("To delete all records, run ..."). A negation shortly before the phrase ("never share your
password", "do not, under any circumstances, delete ...") makes it advice. Pure Python.
"""

from __future__ import annotations

import re
from typing import Final

from claimcheck.critics.safety.rules import ACTION, Rule

# Base forms of the verbs that start an instruction ("Run ...", "Open ... and delete ...").
_IMPERATIVES: Final = frozenset(
    {
        "run", "execute", "type", "enter", "use", "open", "go", "edit", "set", "add", "change", "call", "issue",
        "invoke", "try", "paste", "copy", "put", "make", "write", "start", "launch", "navigate", "click",
        "select", "log", "sign", "connect", "ssh", "visit", "create", "update", "modify", "replace", "append",
        "insert", "configure", "install", "delete", "remove", "drop", "truncate", "wipe", "erase", "purge",
        "destroy", "nuke", "clear", "empty", "overwrite", "disable", "turn", "switch", "deactivate", "bypass",
        "circumvent", "get", "work", "skip", "override", "comment", "print", "echo", "share", "post", "publish",
        "reveal", "expose", "leak", "display", "commit", "push", "upload", "tweet", "email", "dump", "output",
        "hardcode", "disclose", "tell", "send", "give", "borrow", "access", "grab", "find", "check", "head",
        "defeat", "evade", "consider",
    }
)  # fmt: skip
_FILLER = re.compile(
    r"^(?:[\s*_>`\"'“‘(]+|(?:please|just|simply|then|now|next|first|firstly|secondly|finally|also|quickly"
    r"|immediately|carefully|afterwards|go\s+ahead\s+and|after\s+that|step\s+\d+|once\s+done)\b)",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[,;:(\[—–]|\s-\s|\b(?:and|or|then|so|but)\b", re.IGNORECASE)
_CUE = re.compile(
    r"\byou(?:'ll|\s+will|'d|\s+would)?\s+(?:can|should|must|need\s+to|have\s+to|ought\s+to|may\s+want\s+to"
    r"|might\s+want\s+to|want\s+to|need|better)\b"
    r"|\b(?:i|we)\s+(?:would\s+)?(?:recommend|suggest|advise)\b"
    r"|\b(?:fix|solution|workaround|trick|answer|way|step|option)\s+is\s+(?:to|simply|just)\b"
    r"|\b(?:go\s+ahead\s+and|feel\s+free\s+to|make\s+sure\s+(?:to|you)|be\s+sure\s+to|remember\s+to"
    r"|(?:don't|do\s+not)\s+forget\s+to|it(?:'s|\s+is)\s+(?:best|easiest|safest|fine)\s+to"
    r"|instructions?\s*:)",
    re.IGNORECASE,
)
# "To delete all records, run ...": a purpose clause whose main clause is an instruction.
_PURPOSE = re.compile(r"^(?:in\s+order\s+)?to$", re.IGNORECASE)
_GERUND_LEAD = re.compile(r"\b(?:by|try|trying|consider|recommend|suggest|start|starting)\s+$", re.IGNORECASE)
_NEGATION = re.compile(
    r"\b(?:never|not|no|don't|dont|doesn't|mustn't|shouldn't|can't|cannot|won't|avoid|refrain\s+from|stop)\b"
    r"(?!\s+(?:forget|hesitate|only)\b)",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"\b(?:but|instead|rather|however|otherwise)\b|;|,\s*(?:just|simply)\b", re.IGNORECASE)
# How far back a negation still governs a phrase ("do not, under any circumstances, delete ...").
NEGATION_REACH: Final = 60


def instructed(rule: Rule, sentence: str, match: re.Match[str]) -> bool:
    """Whether the phrase at `match` is an instruction to the reader, and not negated."""
    before = sentence[: match.start()]
    if _negated(before):
        return False
    clause = _clause_prefix(before)
    if rule.kind == ACTION:
        head = (match.group("verb") or "").split()[0].lower()
        if head.endswith("ing"):
            # "try disabling 2FA", "you can get in by disabling 2FA"; not "it was caused by disabling 2FA".
            return bool(_GERUND_LEAD.search(before)) and (
                bool(_CUE.search(before)) or _starts_imperative(clause)
            )
        if head not in _IMPERATIVES:
            return False
    if not clause:
        return True
    if _PURPOSE.match(clause):
        main = sentence[match.end() :].split(",", 1)
        return len(main) == 2 and (_starts_imperative(main[1]) or bool(_CUE.search(main[1])))
    return _starts_imperative(clause) or bool(_CUE.search(before))


def _clause_prefix(before: str) -> str:
    """The words of the current clause before the phrase, leading fillers ("just", "Step 2", "**") removed."""
    breaks = list(_CLAUSE_BREAK.finditer(before))
    clause = before[breaks[-1].end() :] if breaks else before
    return _strip_fillers(clause)


def _strip_fillers(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _FILLER.sub("", text, count=1)
    return text.strip()


def _starts_imperative(text: str) -> bool:
    words = re.findall(r"[A-Za-z]+", _strip_fillers(text)[:40])
    return bool(words) and words[0].lower() in _IMPERATIVES


def _negated(before: str) -> bool:
    """Whether a negation shortly before the phrase governs it.

    A clause break between them ends the negation ("if you do not have a backup, delete ...") unless it
    comes straight after it ("do not, under any circumstances, delete ..."); "but", "instead" or "; just"
    always end it.
    """
    window = before[-NEGATION_REACH:]
    negations = list(_NEGATION.finditer(window))
    if not negations:
        return False
    between = window[negations[-1].end() :]
    if _CONTRAST.search(between):
        return False
    clause_break = re.search(r"[,;:—–]|\bthen\b", between)
    return clause_break is None or not between[: clause_break.start()].strip()
