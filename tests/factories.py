"""Rows the tests need again and again."""

from garden.models import Answer, AnswerSource, Chunk, Generator, Question, Retrieval


def answer_for(text: str, *sources: Chunk, question: str = "What does the garden say?") -> Answer:
    """A stored answer (as the extractive synthesiser would give it) citing `sources` as [1], [2], ..."""
    asked = Question.objects.create(
        text=question,
        preflight_domain="factual",
        preflight_risk="HIGH",
        preflight_suggestion="Check the cited passages.",
    )
    Retrieval.objects.create(question=asked)
    answer = Answer.objects.create(question=asked, text=text, generator=Generator.EXTRACTIVE)
    AnswerSource.objects.bulk_create(
        AnswerSource(answer=answer, number=number, chunk=chunk, score=1.0)
        for number, chunk in enumerate(sources, start=1)
    )
    return answer
