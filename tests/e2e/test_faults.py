"""Faults the site must survive."""

import urllib.request

import pytest
from django.conf import settings
from django.db import connection

from config.services import RUN_DIR, EmbeddedPostgres

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=30) as response:
        return int(response.status)


@pytest.mark.alone  # every test process's connection to the shared PostgreSQL is cut too
def test_the_site_reconnects_after_postgresql_restarts(site):
    database = settings.DATABASES["default"]
    if not (RUN_DIR / "pgdata" / "PG_VERSION").exists() or str(database["HOST"]) != "127.0.0.1":
        pytest.skip("needs the embedded PostgreSQL that `make test` starts (DATABASE_URL points elsewhere)")
    for _ in range(4):  # every gunicorn worker holds a persistent connection
        assert get(f"{site}/articles/") == 200

    EmbeddedPostgres(int(database["PORT"])).restart()
    connection.close()  # this test process's own connection was cut too

    for _ in range(4):
        assert get(f"{site}/articles/") == 200
