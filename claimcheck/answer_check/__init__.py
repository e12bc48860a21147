"""Does an answer answer? Whether it states the expected fact of a golden question (`answer_check`), read from
the expected answer's figures and key terms. Pure Python: no Django."""

from claimcheck.answer_check.check import MIN_KEY_TERM_SHARE, AnswerCheck, KeyFacts, answer_check, key_facts

__all__ = ["MIN_KEY_TERM_SHARE", "AnswerCheck", "KeyFacts", "answer_check", "key_facts"]
