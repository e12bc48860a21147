"""The conversation report (`retrieval_report --conversations`) cannot rot unseen: `make test` runs it on the sample
garden, as docs/performance.md measured it, and checks that it printed every figure for every golden turn."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from garden.golden import CONVERSATIONS_FILE, DEFAULT_FILE, conversations_load, golden_load

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

FIGURES = ["in_scope", "right_source_in_top_5", "in_scope_refused", "out_of_scope", "out_of_scope_refused"]
# The report's goal (docs/performance.md): follow-ups within five points of first questions.
WITHIN = 0.05


def test_the_conversation_report_runs_on_the_sample_garden_and_prints_its_figures():
    out = StringIO()
    call_command("retrieval_report", "--conversations", stdout=out)
    report = json.loads(out.getvalue())

    figures = report["conversations"]
    conversations, first = conversations_load(CONVERSATIONS_FILE), golden_load(DEFAULT_FILE)
    follow_ups = [turn for conversation in conversations for turn in conversation.turns[1:]]
    assert report["asked_as"]["account"] is None  # a visitor, as the figures in the docs were measured
    for row in ["first_questions", "opening_turns", "follow_ups", "follow_ups_searched_alone"]:
        assert set(FIGURES) <= figures[row].keys(), row
    assert figures["first_questions"]["in_scope"] + figures["first_questions"]["out_of_scope"] == len(first)
    assert figures["opening_turns"]["in_scope"] + figures["opening_turns"]["out_of_scope"] == len(
        conversations
    )
    assert figures["follow_ups"]["in_scope"] == sum(turn.in_scope for turn in follow_ups)
    assert figures["follow_ups"]["out_of_scope"] == sum(not turn.in_scope for turn in follow_ups)
    assert sum(
        kind["in_scope"] + kind["out_of_scope"] for kind in figures["follow_ups_by_kind"].values()
    ) == len(follow_ups)
    found, first_found = (
        figures["follow_ups"]["right_source_in_top_5"],
        figures["first_questions"]["right_source_in_top_5"],
    )
    assert found >= first_found - WITHIN, (found, first_found)
    refused = figures["follow_ups"]["out_of_scope_refused"]
    assert refused >= figures["first_questions"]["out_of_scope_refused"] - WITHIN, refused
    assert all(miss["searched_for"] for miss in figures["missed"])
