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


@pytest.fixture
def answered_golden(tmp_path):
    """Three questions whose answers are known to state their expected fact or not: the tunnel's length as the
    golden set gives it, the same question expecting a length the garden never gives, and an out-of-scope one."""
    entries = {e["id"]: e for e in yaml.safe_load(DEFAULT_FILE.read_text())}
    chosen = [entries["g002"], {**entries["g002"], "id": "w002", "answer": "502 m"}, entries["g050"]]
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(chosen))
    return path
