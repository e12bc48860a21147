"""The `safety` critic (block): the answer instructs deleting data, exposing secrets or bypassing authentication.

Pattern-based, and built to tell an instruction from a mention. There are three kinds of rule:

- *literals* always count: a string that looks like a real secret (`sk-ant-...`, `AKIA...`, a private key
  header) or a secret's value given outright (`the admin password is "hunter2"`, `SECRET_KEY = "..."`);
- *commands* (`rm -rf`, `DROP TABLE`, `echo $API_KEY`, `--skip-grant-tables`) count inside a fenced code
  block, or in prose when they are framed as an instruction;
- *actions* in words ("delete all records", "disable 2FA", "share the API key") count only when framed as an
  instruction: an imperative ("Delete all records."), a modal aimed at the reader ("you should ..."), or a
  recommendation ("the fix is to ...", "I suggest ...", "try disabling ...").

A negation before the phrase ("never share your password", "do not, under any circumstances, delete ...")
makes it advice, and a question or a narrative ("the society deleted the old records in 1999") is not an
instruction. Details name the matched phrases, with secret values redacted, and their categories. Pure Python.

The rules and their word lists are in `rules`, the reading of a sentence as an instruction in `instructions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from claimcheck.claims import split_sentences
from claimcheck.critics.base import FENCED_CODE, Critic, CriticInput, Finding, blank_code
from claimcheck.critics.safety.instructions import instructed
from claimcheck.critics.safety.rules import (
    ACTION,
    BYPASS_AUTH,
    CATEGORIES,
    CATEGORY_LABELS,
    DELETE_DATA,
    EXPOSE_SECRETS,
    LITERAL,
    MASS,
    PLACEHOLDER,
    RANDOM,
    RULES,
    Rule,
)
from claimcheck.terms import Severity

__all__ = ["BYPASS_AUTH", "CATEGORIES", "CRITIC", "DELETE_DATA", "EXPOSE_SECRETS", "NAME", "SEVERITY", "scan"]

NAME: Final = "safety"
SEVERITY: Final = Severity.BLOCK

PASSED_MESSAGE: Final = "No instruction to delete data, expose secrets or bypass authentication was found."
BLOCKED_MESSAGE: Final = "Blocked: the answer instructs {labels}."


@dataclass(frozen=True)
class _Match:
    category: str
    rule: str
    phrase: str
    start: int
    end: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "rule": self.rule,
            "phrase": self.phrase,
            "start": self.start,
            "end": self.end,
        }


def scan(critic_input: CriticInput) -> Finding:
    """Block the answer if it instructs deleting data, exposing secrets or bypassing authentication."""
    answer = critic_input.answer
    matches = [*_scan_code_blocks(answer), *_scan_prose(answer)]
    matches = _without_overlaps(matches)
    categories = [category for category in CATEGORIES if any(m.category == category for m in matches)]
    details = {"categories": categories, "matches": [match.as_dict() for match in matches]}
    if not matches:
        return Finding(passed=True, message=PASSED_MESSAGE, details=details)
    labels = [CATEGORY_LABELS[category] for category in categories]
    joined = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    return Finding(passed=False, message=BLOCKED_MESSAGE.format(labels=joined), details=details)


def _scan_code_blocks(answer: str) -> list[_Match]:
    """Commands and secrets in fenced code blocks: code in an answer is there to be run."""
    found = []
    for block in FENCED_CODE.finditer(answer):
        offset = block.start("body")
        body = block.group("body")
        for rule in RULES:
            if rule.kind == ACTION:
                continue
            for match in rule.pattern.finditer(body):
                recorded = _record(rule, match, offset)
                if recorded is not None:
                    found.append(recorded)
    return found


def _scan_prose(answer: str) -> list[_Match]:
    prose = blank_code(answer, inline=False)
    found = []
    for start, end in split_sentences(prose):
        sentence = prose[start:end]
        is_question = sentence.rstrip(" \t*_\"'”’)]").endswith("?")
        for rule in RULES:
            for match in rule.pattern.finditer(sentence):
                if rule.kind != LITERAL and (is_question or not instructed(rule, sentence, match)):
                    continue
                recorded = _record(rule, match, start)
                if recorded is not None:
                    found.append(recorded)
    return found


def _record(rule: Rule, match: re.Match[str], offset: int) -> _Match | None:
    phrase = match.group(0).strip()
    if rule.needs_mass and not MASS.search(phrase):
        return None
    if rule.secret_group is not None:
        value = match.group(rule.secret_group)
        if PLACEHOLDER.search(value) or value.isdigit() or len(set(value)) < 5:
            return None
        if rule.random_value and not (RANDOM.search(value) or len(value) >= 20):
            return None
        # The value itself must not reach the details: they are stored and shown to operators.
        phrase = phrase.replace(value, _redact(value))
    return _Match(rule.category, rule.name, phrase, offset + match.start(), offset + match.end())


def _redact(value: str) -> str:
    keep = 7 if value.startswith(("sk-ant-", "github_pat_")) else 4
    return f"{value[:keep]}…[{len(value)} chars]"


def _without_overlaps(matches: list[_Match]) -> list[_Match]:
    """One match per stretch of text and category (a command and its action wording often overlap)."""
    kept: list[_Match] = []
    for match in sorted(matches, key=lambda m: (m.start, -(m.end - m.start))):
        if any(k.category == match.category and k.start < match.end and match.start < k.end for k in kept):
            continue
        kept.append(match)
    return kept


CRITIC: Final = Critic(NAME, SEVERITY, scan)
