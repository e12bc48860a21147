from django.urls import path, register_converter

from dashboard.views import judge, marks, operator, reader, review


class GardenSlugConverter:
    """A slug the garden makes from a name in any script (`пароли`, `日本語`, `café`): no '/', no space. Django's
    `slug` converter matches ASCII only, so a page with a Unicode slug had no address."""

    regex = r"[^/\s]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(GardenSlugConverter, "garden_slug")

app_name = "dashboard"
urlpatterns = [
    path("", reader.ask_page, name="ask"),
    path("ask/stream/<str:token>/", reader.ask_stream, name="ask-stream"),
    path("conversations/<uuid:public_id>/", reader.conversation_page, name="conversation"),
    path("answers/<uuid:public_id>/", reader.answer_page, name="answer"),
    path("answers/<uuid:public_id>/verdict/", reader.verdict_partial, name="verdict"),
    path("answers/<uuid:public_id>/mark/", marks.answer_mark, name="answer-mark"),
    path("answers/<uuid:public_id>/claims/<int:claim_id>/report/", marks.claim_report, name="claim-report"),
    path("articles/", reader.article_list, name="articles"),
    path("articles/<garden_slug:slug>/", reader.article_page, name="article"),
    path("topics/<garden_slug:slug>/", reader.topic_page, name="topic"),
    path("images/<str:sha256>/<str:name>", reader.image, name="image"),
    path("review/", review.queue_page, name="review"),
    path("review/claims/<int:claim_id>/decide/", review.decide, name="review-decide"),
    path("operators/logs/", operator.logs_page, name="logs"),
    path("operators/judge/retrain/", judge.judge_retrain, name="judge-retrain"),
    path("operators/judge/<int:version>/", judge.judge_version, name="judge-version"),
    path("operators/judge/<int:version>/activate/", judge.judge_activate, name="judge-activate"),
    path("operators/runs/", operator.runs_page, name="runs"),
    path("operators/runs/compare/", operator.run_compare, name="run-compare"),
    path("operators/runs/<int:run_id>/", operator.run_page, name="run"),
    path("operators/runs/<int:run_id>/export.<str:fmt>", operator.run_export, name="run-export"),
]
