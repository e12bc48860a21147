"""Fixtures shared by the verifier's tests."""

import pytest


@pytest.fixture(scope="module")
def judge_on_one_thread() -> None:
    """The local judge's own tests run torch on one thread, as they always have (their figures and speed were
    set so); torch keeps the setting for the rest of the session."""
    import torch

    torch.set_num_threads(1)
