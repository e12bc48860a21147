"""The local judge's parameter versions at work: the active one judges (`evaluation.retraining` makes new ones
and rolls back)."""

from __future__ import annotations

import logging

from claimcheck.judges.local import Params, params_from_dict, params_install
from verifier.models import JudgeParameters, ParametersSource

logger = logging.getLogger(__name__)

STALE_VERSION = "judge parameters v%s were fitted on features this code no longer computes; the committed params.json judges"

# The version whose parameters this process has installed (None: none yet, the committed params.json).
_installed_id: int | None = None


def judge_parameters_use() -> int | None:
    """Make the local judge in this process decide with the active version; return its id (None: no version
    is stored, the committed params.json judges). One indexed query; the parameters are reloaded only when
    the active version changed since the last call, so a worker follows a retraining or a rollback at once."""
    global _installed_id
    active = JudgeParameters.objects.filter(active=True).values_list("pk", flat=True).first()
    if active != _installed_id:
        params_install(_stored_params(active))
        _installed_id = active
    return active


def _stored_params(version_id: int | None) -> Params | None:
    """A version's parameters to install, None for the committed params.json: the shipped version always
    reads the file, so an upgrade that recalibrates it takes effect; a retrained version fitted on features the
    code no longer computes cannot judge, and the committed parameters do (logged)."""
    if version_id is None:
        return None
    row = JudgeParameters.objects.filter(pk=version_id).values("version", "source", "params").first()
    if row is None or row["source"] == ParametersSource.SHIPPED:
        return None
    installed = params_from_dict(row["params"])
    if installed is None:
        logger.warning(STALE_VERSION, row["version"])
    return installed
