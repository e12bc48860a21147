"""Fixtures shared by the verifier's tests."""

import pytest
import yaml

from garden.golden import DEFAULT_FILE


@pytest.fixture
def small_golden(tmp_path):
    """Four questions of the real golden set: three in scope, one out of scope."""
    entries = yaml.safe_load(DEFAULT_FILE.read_text())
    chosen = [e for e in entries if e["category"] == "single_fact"][:2]
    chosen += [e for e in entries if e["category"] == "outdated"][:1]
    chosen += [e for e in entries if e["category"] == "out_of_scope"][:1]
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(chosen))
    return path
