"""`check_text` scores texts against their own sources: the classic case, and the documented output shape."""

import json

import pytest
from django.core.management import CommandError, call_command

from claimcheck.terms import RiskLabel

SOURCE = "The Eiffel Tower opened in Paris in 1889."


def run(tmp_path, items, *extra):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(item) + "\n" for item in items))
    out = tmp_path / "out.jsonl"
    call_command("check_text", "--jsonl", str(source), "--out", str(out), *extra)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_the_classic_case(tmp_path):
    wrong, right = run(
        tmp_path,
        [
            {"id": "wrong", "source": SOURCE, "text": "The Eiffel Tower opened in Madrid in 1923."},
            {"id": "right", "source": [SOURCE], "text": "The Eiffel Tower opened in Paris in 1889."},
        ],
        "--judge",
        "local",
    )

    assert wrong["claims"][0]["status"] in {"contradicted", "unverified"}
    assert {"wrong-place", "wrong-year"} <= set(wrong["claims"][0]["flags"])
    assert wrong["risk_label"] == RiskLabel.HALLUCINATING and wrong["supported"] is False
    assert right["claims"][0]["status"] == "verified"
    assert right["claims"][0]["quote"] == SOURCE and right["claims"][0]["source_index"] == 1
    assert right["risk_label"] == RiskLabel.GROUNDED and right["supported"] is True
    assert {"id", "verdict", "risk_score", "delta_score", "claims"} <= set(right)
    assert {"text", "status", "quote", "source_index", "confidence", "flags"} <= set(right["claims"][0])


def test_unreadable_lines_are_reported_and_the_rest_judged(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": 1, "source": "A.", "text": "A."}\nnot json\n')
    with pytest.raises(CommandError, match="1 line"):
        call_command("check_text", "--jsonl", str(source), "--out", str(tmp_path / "out.jsonl"))
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 1


def test_half_a_surrogate_pair_in_an_item_is_judged_not_a_crash(tmp_path):
    # json.dumps escapes the lone surrogate as "\\udcff", which is how such a file reaches the command.
    [judged] = run(tmp_path, [{"id": "x", "source": SOURCE + " \udcff", "text": "It opened in 1889. \udcff"}])
    assert judged["claims"][0]["status"] == "verified"
