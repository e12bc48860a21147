"""Project wiring: settings, URLs, the Celery app, WSGI/ASGI and the local service runner."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
