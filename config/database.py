"""The address of the database Django is using, for child processes (Celery workers) that must share it."""

from django.db import connection


def current_database_url() -> str:
    """A `postgres://` URL for the connection's current settings (e.g. the test or scratch database)."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
