"""The Celery app: configured from Django settings (`CELERY_*`), tasks discovered in each app's tasks.py."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("groundwork")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
