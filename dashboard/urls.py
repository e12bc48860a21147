from django.urls import path

from dashboard import views

app_name = "dashboard"
urlpatterns = [
    path("", views.ask_page, name="ask"),
    path("answers/<int:answer_id>/", views.answer_page, name="answer"),
    path("answers/<int:answer_id>/verdict/", views.verdict_partial, name="verdict"),
    path("articles/", views.article_list, name="articles"),
    path("articles/<slug:slug>/", views.article_page, name="article"),
    path("topics/<slug:slug>/", views.topic_page, name="topic"),
]
