"""Fixtures of the engine's tests, which need no database and no Django settings: `pytest tests/claimcheck -p
no:django` runs them (the root conftest imports Django's modules but configures nothing)."""

import pytest

from verifier.encoder import encoder_use


@pytest.fixture(scope="session", autouse=True)
def judge_reads_with_the_garden_model() -> None:
    """The local judge reads text with the garden's MiniLM, as the verifier installs it at start-up (Django may
    not be set up here to do so)."""
    encoder_use()


@pytest.fixture(scope="module")
def judge_on_one_thread() -> None:
    """The local judge's own tests run torch on one thread, as they always have (their figures and speed were
    set so); torch keeps the setting for the rest of the session."""
    import torch

    torch.set_num_threads(1)
