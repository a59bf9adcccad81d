"""Rendering judgements: the table, the explanations, the summary, Markdown and JSON."""

import json

from handoff.checker.verdicts import (Basis, Expectation, FactSeen, RunJudgement, ScenarioJudgement, StepFacts,
                                      TurnJudgement, Verdict)
from handoff.protocol import Backend, Ready
from handoff.report import as_json, markdown, render
from handoff.runs.record import RunOptions, RunRecord, Versions

READY = Ready(t=0.0, pid=1, hostname="h", address=None, home="/h", runtime_version="1.0.102", sdk_version="1.0.25",
              runtime_start_ms=1)


def step(name="B"):
    return StepFacts(step=name, host="local", home="shared", store="home", ready=READY, eventlog=None, actions=(),
                     failures=(), holding=None, faults=(), finished=True, exit_code=0, timed_out=False, problems=())


def turn(scenario, kind="ask", verdict=Verdict.KEPT, wanted="kept", met=True, evidence=Basis.ANSWER_AND_WIRE):
    expectations = (Expectation("verdict", wanted, str(verdict), met),) if kind == "ask" else ()
    return TurnJudgement(scenario, kind, 2, step(), answer="Your favourite is 'At Risk'.",
                         fact_reached_model=FactSeen.YES, verdict=verdict if kind == "ask" else None,
                         reason=f"{scenario} basis" if kind == "ask" else "", evidence=evidence if kind == "ask" else None,
                         expectations=expectations)


def scenario(name, *turns, skipped=None):
    return ScenarioJudgement(name, f"{name} title", f"{name} proves this", f"{name} proves not that", 1.5, turns,
                             skipped=skipped)


JUDGEMENT = RunJudgement("run-1", "At Risk", (
    scenario("same-process", turn("same-process", kind="tell"), turn("same-process")),
    scenario("isolated-store", turn("isolated-store", verdict=Verdict.LOST, wanted="kept", met=False)),
    scenario("no-id", turn("no-id", verdict=Verdict.LOST, wanted="lost", evidence=Basis.ANSWER_ONLY)),
))


def test_render_shows_headers_scenarios_and_explanations():
    text = render(JUDGEMENT)
    assert text.startswith("Fact to remember: 'At Risk'")
    for header in ("scenario", "turn", "ran in", "store", "closed", "answer", "reached", "event log",
                   "verdict", "evidence", "expected", "match"):
        assert header in text
    for judged in JUDGEMENT.scenarios:
        assert f"{judged.name} — {judged.title} (1.5 s)" in text
        assert f"  proves: {judged.proves}" in text
        assert f"  does not prove: {judged.does_not_prove}" in text
    assert "  turn 2 (B): lost — isolated-store basis" in text


def test_the_table_says_what_each_verdict_rests_on():
    lines = render(JUDGEMENT).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("no-id"))
    assert "lost       answer      lost" in lines[at]  # verdict, then evidence wrapped over two lines
    assert "only" in lines[at + 1]


def test_render_marks_mismatches_in_the_table():
    lines = render(JUDGEMENT).splitlines()
    assert any("isolated-store" in line and line.rstrip().endswith("NO") for line in lines)
    assert any("no-id" in line and line.rstrip().endswith("yes") for line in lines)


def test_summary_names_the_scenarios_not_as_expected():
    last = render(JUDGEMENT).splitlines()[-1]
    assert last == "3 scenarios, 3 judged turns, 2 as expected; NOT as expected: isolated-store"


def test_summary_counts_words_right_and_names_what_could_not_be_judged():
    unknown = turn("crash", verdict=Verdict.UNKNOWN, wanted="kept", met=None)
    last = render(RunJudgement("r", "At Risk", (scenario("crash", unknown),))).splitlines()[-1]
    assert last == "1 scenario, 0 judged turns, 0 as expected; could not be judged: crash"


def test_an_unknown_turn_is_marked_with_a_question_mark_not_no():
    unknown = turn("crash", verdict=Verdict.UNKNOWN, wanted="kept", met=None)
    line = next(line for line in render(RunJudgement("r", "x", (scenario("crash", unknown),))).splitlines()
                if line.startswith("crash "))
    assert line.rstrip().endswith("?")


def test_skipped_scenarios_say_why():
    skipped = scenario("crash-after-turn", skipped="no runtime")
    assert "  skipped: no runtime" in render(RunJudgement("r", "At Risk", (skipped,)))


def test_markdown_is_a_table_with_escaped_cells():
    text = markdown(RunJudgement("r", "a|b", JUDGEMENT.scenarios))
    assert "**Fact to remember:** 'a\\|b'" in text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0].startswith("| scenario | turn | ran in |") and table[1].startswith("|---|")
    assert len(table) == 2 + len(JUDGEMENT.turns)
    assert all(line.count(" | ") == table[0].count(" | ") for line in table[2:])


def test_json_has_the_record_and_the_judgement_with_exit_code_and_as_expected():
    record = RunRecord("run-1", "run", 0.0, 1.0, Versions("0", "1.0.25", "1.0.102", "3.11", "Linux", "m", 2),
                       RunOptions("At Risk", "retail segment", 2, Backend()))
    data = json.loads(as_json(record, JUDGEMENT))
    assert data["record"]["id"] == "run-1" and data["record"]["options"]["backend"]["kind"] == "witness"
    assert data["judgement"]["exit_code"] == 1
    turns = [t for s in data["judgement"]["scenarios"] for t in s["turns"]]
    assert [t["as_expected"] for t in turns] == [None, True, False, True]
    assert turns[1]["verdict"] == "kept" and turns[1]["step"]["ready"]["pid"] == 1
