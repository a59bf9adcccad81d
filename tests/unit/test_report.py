"""Rendering judgements: the plan, the learner's table, the rung lines, the wide table,
the summary, Markdown and JSON."""

import json
import re

from handoff.checker.verdicts import (Basis, Expectation, FactSeen, RunJudgement, ScenarioJudgement, StepFacts,
                                      TurnJudgement)
from handoff.words import Verdict
from handoff.fact import Fact
from handoff.protocol import COPILOT, Backend, EventLog, Ready
from handoff.report.formats import as_json, markdown, render
from handoff.report.terminal import WIDTH, plan, rung_line
from handoff.runs.record import RunOptions, RunRecord, ScenarioRecord, Versions
from handoff.scenario import Scenario, Step

MACHINE = "this-machine"


def ready(pid=1, hostname=MACHINE):
    return Ready(t=0.0, pid=pid, hostname=hostname, address=None, home="/h", runtime_version="1.0.102",
                 sdk_version="1.0.25", runtime_start_ms=1)


RESUMED = EventLog(t=0.0, session_id="s", found=True, events=12, starts=1, resumes=1, closed_before_resume=True,
                   resume_event_count=8)


def step(name="B", pid=2, hostname=MACHINE, eventlog=None):
    return StepFacts(step=name, host="local", home="shared", store="home", ready=ready(pid, hostname),
                     eventlog=eventlog, actions=(), failures=(), holding=None, faults=(), finished=True, exit_code=0,
                     timed_out=False, problems=())


def tell(scenario, facts=None, number=1):
    return TurnJudgement(scenario, "tell", number, facts or step("A", 1), answer="OK", fact_reached_model=FactSeen.YES)


def ask(scenario, verdict=Verdict.KEPT, wanted="kept", met=True, evidence=Basis.ANSWER_AND_WIRE, facts=None,
        number=2):
    return TurnJudgement(scenario, "ask", number, facts or step(), answer="Your favourite is 'At Risk'.",
                         fact_reached_model=FactSeen.YES, verdict=verdict, reason=f"{scenario} basis",
                         evidence=evidence, expectations=(Expectation("verdict", wanted, str(verdict), met),))


def scenario(name, *turns, skipped=None, crashed=None):
    return ScenarioJudgement(name, f"{name} title", f"{name} proves this", f"{name} proves not that", 1.5, turns,
                             skipped=skipped, crashed=crashed)


SAME = step("P", 7, eventlog=RESUMED)
JUDGEMENT = RunJudgement("run-1", "At Risk", (
    scenario("same-process", tell("same-process", SAME), ask("same-process", facts=SAME)),
    scenario("isolated-store", tell("isolated-store"), ask("isolated-store", Verdict.LOST, "kept", met=False)),
    scenario("no-id", tell("no-id"), ask("no-id", Verdict.LOST, "lost", evidence=Basis.ANSWER_ONLY)),
))
SHORTS = {"same-process": ("resume after close works", "a restart"), "no-id": ("a new session is empty", "resume")}


def record_for(judgement: RunJudgement, jobs=2, backend=Backend(), command="run") -> RunRecord:
    scenarios = [ScenarioRecord(s.name, Scenario(s.name, s.title, s.proves, s.does_not_prove, (Step("A", ("create",)),),
                                                 proves_in_short=SHORTS.get(s.name, ("", ""))[0],
                                                 does_not_prove_in_short=SHORTS.get(s.name, ("", ""))[1]))
                 for s in judgement.scenarios]
    return RunRecord(judgement.run_id, command, 0.0, 1.0, Versions("0", "1.0.25", "1.0.102", "3.11", "Linux", MACHINE, 2),
                     RunOptions(judgement.fact, "retail segment", jobs, backend), scenarios)


RECORD = record_for(JUDGEMENT)


def table_lines(text):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("scenario "))
    end = lines.index("", start)
    return lines[start:end]


def test_the_fact_and_the_plan_come_first():
    lines = render(RECORD, JUDGEMENT).splitlines()
    assert lines[0] == "Fact to remember: 'At Risk' (the favourite retail segment)"
    assert lines[1] == "Plan: 3 scenarios, 2 at a time; every step is a new worker process with its own Copilot runtime."
    assert lines[2].startswith("Model: the witness model as a BYOK provider (handoff-witness)")


def test_the_plan_counts_words_right_and_names_a_model_it_cannot_watch():
    text = plan(Fact("Champions", "customer tier"), 1, 2, Backend(COPILOT, "claude-haiku-4.5", token_env="GH_TOKEN"))
    assert "Fact to remember: 'Champions' (the favourite customer tier)" in text
    assert "Plan: 1 scenario, 1 at a time;" in text
    assert "cannot be recorded, so a verdict rests on the answer alone" in " ".join(text.split())
    assert all(len(line) <= WIDTH for line in text.splitlines())


def test_the_learners_table_has_one_row_per_scenario_with_where_it_was_told_and_asked():
    table = table_lines(render(RECORD, JUDGEMENT))
    assert re.split(r"\s{2,}", table[0]) == ["scenario", "told → asked: verdict", "fact sent", "ok?"]
    rows = [re.split(r"\s{2,}", line) for line in table[2:]]
    assert rows == [["same-process", "P → P: kept", "yes", "yes"],
                    ["isolated-store", "A → B: lost", "yes", "NO"],
                    ["no-id", "A → B: lost", "yes", "yes"]]


def test_a_scenarios_questions_share_its_row_in_the_order_asked():
    """Told once and asked twice reads ``A → B: lost, C: kept``; a second tell starts
    its own part; a tell with a verdict of its own reads ``A: lost-silently``; the
    fact sent is listed in the same order, and ok? names each turn when they differ."""
    a, c, d = step("A", 1), step("C", 3), step("D", 4)
    lost_tell = TurnJudgement("s", "tell", 1, a, answer="OK", fact_reached_model=FactSeen.YES,
                              verdict=Verdict.LOST_SILENTLY, reason="later resume lacks it",
                              expectations=(Expectation("verdict", "lost-silently", "lost-silently", True),))
    judged = RunJudgement("r", "At Risk", (scenario(
        "s", lost_tell, ask("s", Verdict.LOST, "lost", number=2),
        ask("s", Verdict.KEPT, "lost", met=False, facts=c, number=3),
        tell("s", facts=c, number=4), ask("s", facts=d, number=5)),))
    [row] = table_lines(render(record_for(judged), judged))[2:]
    assert re.split(r"\s{2,}", row) == ["s", "A: lost-silently → B: lost, C: kept; C → D: kept",
                                        "yes, yes, yes, yes", "yes, yes, NO, yes"]


def test_a_host_other_than_this_machine_is_named():
    a, b = step("A", 1, "host-a"), step("B", 1, "host-b")
    judged = RunJudgement("r", "At Risk", (scenario("x", tell("x", a), ask("x", facts=b)),))
    [row] = table_lines(render(record_for(judged), judged))[2:]
    assert re.split(r"\s{2,}", row)[1] == "A@host-a → B@host-b: kept"
    # the Markdown's table, a row per question, names the process ids too
    assert "| x | A 1@host-a | B 1@host-b | yes | kept | yes |" in markdown(record_for(judged), judged)


def test_the_default_output_fits_100_columns_even_with_long_names():
    long_step = step("a-step-with-a-very-long-name", 1234567, "a-host-with-a-long-name")
    name = "a-scenario-with-a-name-longer-than-any-column-allows"
    judged = RunJudgement("r", "At Risk", (scenario(name, tell(name, long_step), ask(name, facts=long_step)),))
    text = render(record_for(judged), judged)
    assert max(len(line) for line in text.splitlines()) <= WIDTH


def test_one_line_per_rung_says_what_it_proved_and_did_not():
    text = render(RECORD, JUDGEMENT, wide=True)
    assert "same-process proved resume after close works, not a restart." in text.splitlines()
    assert "no-id proved a new session is empty, not resume." in text.splitlines()
    # Without the short texts the scenario's own sentence is cut at its first stop.
    assert "isolated-store did NOT come out as expected: turn 2 (B): lost, expected kept" in text.splitlines()
    # By default only a rung that proved nothing has its line: the answer comes by condition.
    default = render(RECORD, JUDGEMENT).splitlines()
    assert "isolated-store did NOT come out as expected: turn 2 (B): lost, expected kept" in default
    assert "same-process proved resume after close works, not a restart." not in default


def test_a_rung_that_proved_nothing_says_why():
    skipped = scenario("cross-machine-ssh", skipped="no sshd on this machine")
    assert rung_line(skipped, "x", "y") == "cross-machine-ssh was skipped: no sshd on this machine"
    unknown = scenario("crash", ask("crash", Verdict.UNKNOWN, "kept", met=None))
    assert rung_line(unknown, "x", "y") == "crash could not be judged: crash basis"
    assert rung_line(scenario("s", ask("s")), "", "").startswith("s proved s proves this, not s proves not that")


def test_a_long_rung_line_is_cut_to_the_width():
    line = rung_line(scenario("s", ask("s")), "w " * 80, "z")
    assert len(line) == WIDTH and line.endswith("…")


def test_a_long_reason_for_proving_nothing_is_kept_whole_and_wrapped_to_the_width():
    """A skip's reason often says what to do (e.g. which --engine to use): never cut."""
    reason = "no Docker daemon answers at unix:///var/run/docker.sock: start it, or use --engine podman " * 2
    judged = RunJudgement("r", "At Risk", (scenario("cross-container-volume", skipped=reason.strip()),))
    assert rung_line(judged.scenarios[0], "x", "y") == f"cross-container-volume was skipped: {reason.strip()}"
    lines = render(record_for(judged), judged).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("cross-container-volume was skipped:"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    assert max(len(line) for line in lines) <= WIDTH and end - start > 1
    assert " ".join(" ".join(lines[start:end]).split()) == f"cross-container-volume was skipped: {reason.strip()}"
    assert f"- cross-container-volume was skipped: {reason.strip()}" in markdown(record_for(judged), judged)


def test_the_summary_counts_words_right_and_names_what_was_not_as_expected():
    assert render(RECORD, JUDGEMENT).splitlines()[-1] == \
        "3 scenarios, 3 judged turns, 2 as expected; NOT as expected: isolated-store"
    unknown = RunJudgement("r", "At Risk", (scenario("crash", ask("crash", Verdict.UNKNOWN, "kept", met=None)),))
    assert render(record_for(unknown), unknown).splitlines()[-1] == \
        "1 scenario, 0 judged turns, 0 as expected; could not be judged: crash"


def test_an_unknown_turn_is_marked_with_a_question_mark_not_no():
    unknown = RunJudgement("r", "x", (scenario("crash", ask("crash", Verdict.UNKNOWN, "kept", met=None)),))
    [row] = table_lines(render(record_for(unknown), unknown))[2:]
    assert row.rstrip().endswith("?")


def test_wide_keeps_every_column_and_the_full_explanations():
    text = render(RECORD, JUDGEMENT, wide=True)
    for header in ("scenario", "turn", "ran in", "store", "closed", "answer", "reached", "event log",
                   "verdict", "evidence", "expected", "match"):
        assert header in text
    for judged in JUDGEMENT.scenarios:
        assert f"{judged.name} — {judged.title} (1.5 s)" in text
        assert f"  proves: {judged.proves}" in text
    assert "  turn 2 (B): lost — isolated-store basis" in text


def test_wide_puts_a_steps_values_on_its_question_not_on_the_tell_before_its_resume():
    """same-process tells and asks in one step P: 'resume loaded 8 events' and 'closed
    before resume: yes' are about the resume before turn 2, not about turn 1."""
    lines = render(RECORD, JUDGEMENT, wide=True).splitlines()
    told = next(line for line in lines if line.startswith("same-process") and "1 tell" in line)
    asked = next(line for line in lines if line.startswith("same-process") and "2 ask" in line)
    assert "resume loaded" not in told and " yes " not in told.split("OK")[0]
    assert "resume loaded 8 events" in asked and re.search(r"shared\s+yes\s", asked)


def test_wide_says_what_each_verdict_rests_on():
    lines = render(RECORD, JUDGEMENT, wide=True).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("no-id") and "ask" in line)
    assert "lost       answer      lost" in lines[at]  # verdict, then evidence wrapped over two lines
    assert "only" in lines[at + 1]


def test_skipped_scenarios_say_why_in_both_views():
    judged = RunJudgement("r", "At Risk", (scenario("crash-after-turn", skipped="no runtime"),))
    assert "crash-after-turn was skipped: no runtime" in render(record_for(judged), judged)
    assert "  skipped: no runtime" in render(record_for(judged), judged, wide=True)


def test_markdown_is_the_learners_table_with_escaped_cells():
    judged = RunJudgement("r", "a|b", JUDGEMENT.scenarios)
    text = markdown(record_for(judged), judged)
    assert text.startswith("**Fact to remember: 'a\\|b' (the favourite retail segment)**")
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0] == "| scenario | told in | asked in | fact sent | verdict | ok? |" and table[1].startswith("|---|")
    assert len(table) == 2 + 3
    assert "- same-process proved resume after close works, not a restart." in text


def test_wide_markdown_has_every_turn():
    text = markdown(RECORD, JUDGEMENT, wide=True)
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0].startswith("| scenario | turn | ran in |") and len(table) == 2 + len(JUDGEMENT.turns)
    assert all(line.count(" | ") == table[0].count(" | ") for line in table[2:])


def test_json_has_the_record_and_the_judgement_with_exit_code_and_as_expected():
    data = json.loads(as_json(RECORD, JUDGEMENT))
    assert data["record"]["id"] == "run-1" and data["record"]["options"]["backend"]["kind"] == "witness"
    assert data["judgement"]["exit_code"] == 1
    turns = [t for s in data["judgement"]["scenarios"] for t in s["turns"]]
    assert [t["as_expected"] for t in turns] == [None, True, None, False, None, True]
    assert turns[1]["verdict"] == "kept" and turns[1]["step"] == "P"
    steps = data["judgement"]["scenarios"][0]["steps"]
    assert steps["P"]["ready"]["pid"] == 7 and steps["P"]["step"] == "P"  # each step's facts once


def test_a_run_of_one_rung_says_what_it_proved_there_being_no_answer_by_condition():
    one = RunJudgement("r", "At Risk", (scenario("same-process", ask("same-process")),))
    lines = render(record_for(one), one).splitlines()
    assert any(line.startswith("same-process proved ") for line in lines), lines
