from django.urls import path

from dashboard.views import judge, operator, reader, review

app_name = "dashboard"
urlpatterns = [
    path("", reader.ask_page, name="ask"),
    path("answers/<uuid:public_id>/", reader.answer_page, name="answer"),
    path("answers/<uuid:public_id>/verdict/", reader.verdict_partial, name="verdict"),
    path("articles/", reader.article_list, name="articles"),
    path("articles/<slug:slug>/", reader.article_page, name="article"),
    path("topics/<slug:slug>/", reader.topic_page, name="topic"),
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
