"""Does an answer answer? Whether it states the expected fact of a golden question (`score_answer`), read from
the expected answer's figures and key terms. Pure Python: no Django."""

from claimcheck.answer_scoring.scoring import (
    MIN_KEY_TERM_SHARE,
    AnswerScore,
    KeyFacts,
    key_facts,
    score_answer,
)

__all__ = ["MIN_KEY_TERM_SHARE", "AnswerScore", "KeyFacts", "key_facts", "score_answer"]
