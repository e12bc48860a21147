"""The committed `params.json` becomes version 1 of the judge's parameters, active."""

import json
from typing import Any

from django.db import migrations

from claimcheck.judges.local import PARAMS_PATH


def store_shipped(apps: Any, schema_editor: Any) -> None:
    JudgeParameters = apps.get_model("verifier", "JudgeParameters")
    if JudgeParameters.objects.exists() or not PARAMS_PATH.exists():
        return
    JudgeParameters.objects.create(
        version=1,
        source="shipped",
        status="kept",
        params=json.loads(PARAMS_PATH.read_text()),
        report={"reason": "The parameters committed with the code (make calibrate on shared/eval)."},
        active=True,
    )


def remove_shipped(apps: Any, schema_editor: Any) -> None:
    apps.get_model("verifier", "JudgeParameters").objects.filter(version=1, source="shipped").delete()


class Migration(migrations.Migration):
    dependencies = [("verifier", "0007_judge_parameters")]

    operations = [migrations.RunPython(store_shipped, remove_shipped)]
