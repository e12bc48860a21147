"""Pre-flight: classify a question into a risk domain by pattern rules, before any retrieval or model call.

It only observes: the question is never rewritten. The result is shown beside the answer as a sidecar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from garden.models import Risk
from providers.timing import phase


@dataclass(frozen=True)
class Preflight:
    domain: str
    risk: str
    suggestion: str


@dataclass(frozen=True)
class _Rule:
    domain: str
    risk: str
    pattern: re.Pattern[str]
    suggestion: str


def _words(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


# Checked in order; the first domain whose pattern matches wins. Riskier domains come first.
RULES = (
    _Rule(
        "medical",
        Risk.HIGH,
        _words(
            r"symptoms?",
            r"diagnos\w*",
            r"dose|dosage",
            r"medic\w+",
            r"treat(?:ment|ing)?",
            r"injur\w+",
            r"first aid",
            r"disease",
            r"prescri\w+",
            r"allerg\w+",
            r"asthma",
            r"pregnan\w+",
            r"defibrillator",
        ),
        "Health-related: rely only on statements with a verified quote, and check anything medical with a qualified "
        "person or the first-aid procedure itself.",
    ),
    _Rule(
        "legal",
        Risk.HIGH,
        _words(
            r"legal(?:ly)?",
            r"law(?:s|ful)?",
            r"liab\w+",
            r"contract\w*",
            r"sue|lawsuit",
            r"regulations?",
            r"licen[cs]\w*",
            r"compliance",
            r"insurance",
            r"permit(?:ted)?",
            r"court",
            r"rights?",
        ),
        "Legal or regulatory: the answer can only repeat what the garden records; check the cited passage and the "
        "current regulation before acting on it.",
    ),
    _Rule(
        "financial",
        Risk.HIGH,
        _words(
            r"fares?",
            r"prices?",
            r"cost(?:s|ing)?",
            r"£\d*",
            r"\$\d*",
            r"budget\w*",
            r"grants?",
            r"fund\w*",
            r"revenue",
            r"tax\w*",
            r"invest\w*",
            r"donat\w+",
            r"pay|paid|payment",
            r"charges?",
            r"income",
        ),
        "Money matters: figures change; check the date of the cited revision and prefer claims marked verified.",
    ),
    _Rule(
        "citation",
        Risk.HIGH,
        _words(
            r"cite", r"citations?", r"sources?", r"quote", r"reference\w*", r"according to", r"which article"
        ),
        "Citations requested: every [n] links to its passage; a citation the judge could not find is flagged.",
    ),
    _Rule(
        "code",
        Risk.MEDIUM,
        _words(r"code", r"script", r"python", r"sql", r"function", r"api", r"regex", r"program\w*", r"bug"),
        "Code-related: the garden holds prose, not tested code; verify any snippet before running it.",
    ),
    _Rule(
        "creative",
        Risk.LOW,
        _words(r"poem", r"story", r"write (?:me )?a", r"imagine", r"slogan", r"joke", r"limerick", r"haiku"),
        "Creative request: the garden answers from its articles only; creative text is not its purpose.",
    ),
    _Rule(
        "summarization",
        Risk.LOW,
        _words(r"summari[sz]e", r"summary", r"overview", r"tl;?dr", r"in brief", r"outline", r"recap"),
        "Summary: check that each sentence of the summary carries a citation to its source passage.",
    ),
)

FACTUAL = Preflight(
    "factual",
    Risk.HIGH,
    "Factual question: trust the claims marked verified, and follow each [n] to the passage that supports it.",
)


@phase("preflight")
def preflight(question: str) -> Preflight:
    """The risk domain of a question, its risk level and the grounding suggestion to show beside the answer."""
    for rule in RULES:
        if rule.pattern.search(question):
            return Preflight(rule.domain, str(rule.risk), rule.suggestion)
    return FACTUAL
