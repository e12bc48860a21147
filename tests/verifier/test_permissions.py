"""The permissions say what they let a member do, in a database made before their words changed too."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission

spending_on_models = importlib.import_module("verifier.migrations.0025_spending_on_models")


@pytest.mark.django_db
def test_the_logs_permission_names_the_spending_on_every_model_and_an_older_database_is_renamed() -> None:
    permission = Permission.objects.get(codename="view_logs")
    assert permission.name == "Can read the answer logs and the spending on models"

    # As a database made before 0025 has it:
    permission.name = "Can read the answer logs and the judge's spending"
    permission.save()
    spending_on_models._renamed(spending_on_models.OLD, spending_on_models.NEW)(apps, None)
    permission.refresh_from_db()
    assert permission.name == "Can read the answer logs and the spending on models"
