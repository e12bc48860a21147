"""Does an answer state the expected fact of its golden question? Pairs of (answer, expected) both ways."""

import pytest

from claimcheck.answer_scoring import MIN_KEY_TERM_SHARE, key_facts, score_answer

TUNNEL = "How long is Cold Knap Tunnel?"
FOUNDED = "When was the Kestrel Valley Railway Preservation Society founded?"
CURATOR = "Who looks after the museum collection as curator?"
BUILDER = "Who built River Kest?"
HEAVIER = "Which is heavier, No. 4 Millbridge or River Kest, and by how much?"
FARE = "How much is an adult Day Rover ticket?"
MANAGER = "Who is the railway's general manager?"
OVERHAUL = "Is River Kest still under overhaul?"
# The superseded facts of the "outdated" questions, as the golden set gives them.
OUTDATED = {
    FARE: "£14.00 (2023 fares)",
    MANAGER: "Margaret Ellison (General Manager 2011 to February 2024)",
    OVERHAUL: "Under overhaul since 31 October 2021 and not in service, expected back in summer 2024 (estimated "
    "cost £350,000)",
}

STATES_THE_FACT = [
    pytest.param(
        TUNNEL, "402 m (about 440 yards)", "The tunnel is 402 metres long [1].", id="unit-spelled-out"
    ),
    pytest.param(TUNNEL, "402 m (about 440 yards)", "It is about 440 yards long.", id="aside-other-units"),
    pytest.param(
        FOUNDED,
        "11 November 1972, at a meeting in the Drovers Arms, Millbridge",
        "It was founded on November 11th, 1972, at a meeting in the back room of the Drovers Arms in Millbridge.",
        id="date-other-order",
    ),
    pytest.param(
        "What postcode should I put in the satnav for Ashcombe station?",
        "WR7 3KV",
        "Use the postcode WR73KV for the car park.",
        id="postcode-without-space",
    ),
    pytest.param(
        "How many passengers did the railway carry in 2024?",
        "68,900 (up from 63,200 in 2023)",
        "In 2024 the railway carried 68900 passengers.",
        id="thousands-without-comma",
    ),
    pytest.param(
        "How many trains run on a Sunday in summer?",
        "Four return trains (departing Ashcombe at 10:15, 11:20, 13:05 and 14:10), worked by two train sets",
        "There are 4 return trains on summer Sundays, worked by 2 train sets.",
        id="number-words-as-digits",
    ),
    pytest.param(
        "What did the Fenwick Shed cost to build, and when did it open?",
        "£1.1 million (including £640,000 from the Northern Heritage Lottery Board); opened 15 September 2008",
        "The shed cost £1,100,000 and opened on 15/09/2008.",
        id="million-and-numeric-date",
    ),
    pytest.param(
        "When was Harrowden Viaduct restored, and what did it cost?",
        "Restored 1985-87 at a cost of £146,000",
        "The restoration ran from 1985 to 1987 \u2013 and cost 146,000 pounds.",
        id="year-span-and-pounds",
    ),
    pytest.param(
        "When is the first train on Sundays?",
        "10:15 from Ashcombe",
        "The first departure from Ashcombe is at 10.15am.",
        id="time-other-form",
    ),
    pytest.param(
        CURATOR, "Dr Edwin Saltash", "Researchers can book the curator, Dr Edwin Saltash.", id="name"
    ),
    pytest.param(
        HEAVIER,
        "No. 7821 River Kest, at 61.5 tonnes against 38 tonnes: 23.5 tonnes heavier",
        "River Kest is the heavier: it weighs 61.5 tonnes, No. 4 only 38 tonnes.",
        id="difference-left-to-the-reader",
    ),
    pytest.param(
        FARE,
        "£16.50 (2025 fares)",
        "An adult Day Rover costs £16.50; it was £14.00 in 2023.",
        id="fare-and-history",
    ),
]

DOES_NOT = [
    pytest.param(TUNNEL, "402 m (about 440 yards)", "The tunnel is 420 m long.", id="wrong-figure"),
    pytest.param(TUNNEL, "402 m (about 440 yards)", "The tunnel is 402 yards long.", id="wrong-unit"),
    pytest.param(
        FOUNDED,
        "11 November 1972, at a meeting in the Drovers Arms, Millbridge",
        "It was founded on 11 November 1973 at a meeting in the Drovers Arms, Millbridge.",
        id="wrong-year",
    ),
    pytest.param(
        "What postcode should I put in the satnav for Ashcombe station?",
        "WR7 3KV",
        "WR7 3KW.",
        id="wrong-code",
    ),
    pytest.param(CURATOR, "Dr Edwin Saltash", "The curator is Dr Margaret Ellison.", id="wrong-name"),
    pytest.param(
        BUILDER,
        "Corran & Pyke of Leeds (works number 2214), in 1938 for the Great Western Railway",
        "It was built in 1938 by Pellington Engineering of Bristol for the Great Western Railway.",
        id="missing-key-names",
    ),
    pytest.param(
        FOUNDED,
        "11 November 1972, at a meeting in the Drovers Arms, Millbridge",
        "The Kestrel Valley Railway Preservation Society was founded when the Kestrel Valley Railway "
        "Preservation Society was founded, at a meeting in the Drovers Arms in Millbridge.",
        id="repeats-the-question-without-the-date",
    ),
    pytest.param(
        "What kind of bats hibernate in the tunnel?",
        "Lesser horseshoe bats, from November to March",
        "Many kinds of bats hibernate in the tunnel, bats of every kind, in the tunnel where the bats "
        "hibernate: the tunnel's bats are counted in winter.",
        id="many-words-no-fact",
    ),
    pytest.param(
        HEAVIER,
        "No. 7821 River Kest, at 61.5 tonnes against 38 tonnes: 23.5 tonnes heavier",
        "River Kest is heavier, at 61.5 tonnes.",
        id="half-of-a-comparison",
    ),
    pytest.param(FARE, "£16.50 (2025 fares)", "An adult Day Rover costs £14.00.", id="outdated-fact-only"),
]


@pytest.mark.parametrize(("question", "expected", "answer"), STATES_THE_FACT)
def test_an_answer_that_states_the_fact_in_its_own_words_answers(question, expected, answer):
    check = score_answer(
        answer=answer, expected=expected, question=question, outdated_fact=OUTDATED.get(question)
    )
    assert check.answers is True, check.missing


@pytest.mark.parametrize(("question", "expected", "answer"), DOES_NOT)
def test_an_answer_with_a_wrong_figure_or_name_or_no_fact_does_not_answer(question, expected, answer):
    check = score_answer(
        answer=answer, expected=expected, question=question, outdated_fact=OUTDATED.get(question)
    )
    assert check.answers is False


def test_what_is_missing_is_named_as_the_expected_answer_writes_it():
    check = score_answer(
        answer="The tunnel is 420 m long.", expected="402 m (about 440 yards)", question=TUNNEL
    )
    assert check.missing == ("402 m",)


def test_an_outdated_fact_given_as_current_beside_the_current_one_does_not_answer():
    expected = "No. It returned to service on 12 April 2025 after a £412,000 overhaul"
    current = "It came back into service on 12 April 2025 after an overhaul costing £412,000."
    both = (
        "It returned to service on 12 April 2025 after a £412,000 overhaul. It has been under overhaul since "
        "31 October 2021 and is expected back in summer 2024."
    )
    old = "River Kest has been under overhaul since 31 October 2021 and is expected back in summer 2024."
    assert score_answer(
        answer=current, expected=expected, question=OVERHAUL, outdated_fact=OUTDATED[OVERHAUL]
    ).answers
    check = score_answer(answer=both, expected=expected, question=OVERHAUL, outdated_fact=OUTDATED[OVERHAUL])
    assert check.answers is False and check.outdated.startswith("It has been under overhaul since 31 October")
    assert not score_answer(
        answer=old, expected=expected, question=OVERHAUL, outdated_fact=OUTDATED[OVERHAUL]
    ).answers


def test_an_outdated_fact_told_as_history_does_not_spoil_the_answer():
    expected = "Daniel Okafor, in post since 1 March 2024"
    history = "Daniel Okafor has been in post since 1 March 2024; he succeeded Margaret Ellison."
    as_current = "Daniel Okafor has been in post since 1 March 2024. The general manager is Margaret Ellison."
    assert score_answer(
        answer=history, expected=expected, question=MANAGER, outdated_fact=OUTDATED[MANAGER]
    ).answers
    check = score_answer(
        answer=as_current, expected=expected, question=MANAGER, outdated_fact=OUTDATED[MANAGER]
    )
    assert check.answers is False and check.outdated == "The general manager is Margaret Ellison."


def test_a_clear_majority_of_the_key_words_is_needed():
    expected = "Valley Link bus route 47, which stops outside both stations"
    question = "Which bus can I take back from Fellside to Ashcombe?"
    # "bus" is the question's own word: an answer gains nothing by repeating it.
    assert [term.text for term in key_facts(expected, question=question).terms] == [
        "Valley Link",
        "route",
        "stops",
        "outside",
        "stations",
    ]
    assert MIN_KEY_TERM_SHARE == 2 / 3
    four_of_five = "The Valley Link route 47 stops outside Fellside."
    three_of_five = "The Valley Link route 47 stops at both ends."
    assert score_answer(answer=four_of_five, expected=expected, question=question).answers is True
    check = score_answer(answer=three_of_five, expected=expected, question=question)
    assert check.answers is False and check.missing == ("outside", "stations")


def test_a_parenthetical_is_required_only_when_the_rest_names_what_the_question_does():
    question = "Which passing loop is longer, the one at Millbridge or the one at Brackenford?"
    expected = "Brackenford (210 m) is longer than Millbridge (180 m)"
    both = "Brackenford's loop is 210 m long, Millbridge's 180 m."
    names_only = "The loop at Brackenford is longer than the one at Millbridge."
    assert score_answer(answer=both, expected=expected, question=question).answers is True
    assert score_answer(answer=names_only, expected=expected, question=question).answers is False


def test_without_an_expected_answer_there_is_nothing_to_decide():
    assert score_answer(answer="Anything.", expected="", question=TUNNEL).answers is None
