"""A long history (issue 28, rung 6): a step's ``fill`` takes ``filler_turns`` turns about
another topic, the loader checks the pair, the spec carries the count, the witness's
records of those turns are the step's filler (no judged turn's, not "never reported"),
the diagram draws them as one exchange, and the slow tag keeps the rung out of the quick
ladder and in make handoff's."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from handoff.app.matrix import MatrixOptions, _chosen
from handoff.checker.checks import judge_scenario
from handoff.coordinator.specs import worker_spec
from handoff.fact import FILLER_TOPIC, REMEMBER_PATTERN, Fact
from handoff.hosts.local import LocalHost
from handoff.protocol import ActionDone, Backend, Turn, WorkerSpec
from handoff.report.sequence import MODEL, sequence
from handoff.runs.history import ScenarioHistory
from handoff.runs.record import ScenarioRecord, StepRecord
from handoff.scenario import Scenario, Step
from handoff.scenario_files import SCENARIO_DIR, load, select
from handoff.witness.answer import reply_to
from handoff.witness.tags import filler_turn, is_filler_turn
from handoff.words import Action, ReplyKind, Verdict
from tests.unit.test_html_report import FACT, RECALLED, TOLD, evidence, lines, ready
from tests.unit.test_scenario_loader import HEADER, load_error, step, write

FILL_STEP = '[[steps]]\nname = "A"\nactions = ["create", "tell", "fill", "close"]\nfiller_turns = 3\n'


def test_a_fill_takes_the_steps_filler_turns_and_the_spec_carries_them(tmp_path):
    loaded = load(write(tmp_path, HEADER + FILL_STEP + step()))
    assert [s.filler_turns for s in loaded.steps] == [3, 0]
    specs = [worker_spec("demo", s, LocalHost("local"), "/h", None, fact=Fact(), backend=Backend(),
                         runtime_path="/r", witness_url="http://w") for s in loaded.steps]
    assert [WorkerSpec.from_json(s.to_json()).filler_turns for s in specs] == [3, 0]
    assert b"filler_turns" not in specs[1].to_json()  # a worker that knows no fill reads the spec as before


@pytest.mark.parametrize("text, says", [
    (FILL_STEP.replace("filler_turns = 3\n", ""), "field 'filler_turns' must be from 1 to 2000 with a \"fill\""),
    (FILL_STEP.replace("= 3", "= 0"), "must be from 1 to 2000"),
    (FILL_STEP.replace("= 3", "= 2001"), "must be from 1 to 2000"),
    (FILL_STEP.replace("= 3", "= true"), "field 'filler_turns' must be int, got bool"),
    (FILL_STEP.replace('"fill", ', ""), "field 'filler_turns' is set, but the step's actions have no \"fill\""),
    (FILL_STEP.replace('"create", "tell", "fill"', '"fill", "create"'), "has the turn 'fill' before any create"),
])
def test_a_fill_without_its_count_or_a_count_without_a_fill_is_refused(tmp_path, text, says):
    message = load_error(tmp_path, HEADER + text)
    assert "step 'A'" in message and says in message


def test_the_nodejs_worker_does_not_fill(tmp_path):
    message = load_error(tmp_path, HEADER + FILL_STEP + 'sdk = "node@1.0.14"\n')
    assert "has 'fill', which the Node.js worker" in message


def test_a_filler_turn_is_a_remember_prompt_about_another_topic_than_the_facts():
    fact = Fact("At Risk", "retail segment")
    prompt = fact.filler_prompt(7)
    match = REMEMBER_PATTERN.search(prompt)
    assert (match["topic"], match["value"]) == (FILLER_TOPIC, "7")
    assert reply_to([{"role": "user", "content": prompt}]).kind == ReplyKind.ACKNOWLEDGED
    # whatever topic a run chooses, a filler never states (and so never overwrites) its fact
    same = Fact("At Risk", FILLER_TOPIC)
    assert REMEMBER_PATTERN.search(same.filler_prompt(7))["topic"] != FILLER_TOPIC
    history = [{"role": "user", "content": same.remember_prompt},
               *({"role": "user", "content": same.filler_prompt(n)} for n in range(1, 4)),
               {"role": "user", "content": same.question_prompt}]
    assert same.is_in(reply_to(history).text)


def test_a_filler_turns_header_is_never_a_judged_turns_number():
    assert filler_turn(12) == "fill-12" and is_filler_turn("fill-12")
    assert not is_filler_turn("12") and not is_filler_turn(None) and not is_filler_turn("")


SCENARIO = Scenario("long", "T", "P", "D", (Step("A", ("create", "tell", "fill", "close"), filler_turns=2),
                                           Step("B", ("resume", "ask", "close"), expect="kept")))
STEP_A = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(
    ready(101), ActionDone(t=2.0, action="create", session_id="id-1", ms=5),
    Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9),
    ActionDone(t=6.0, action="fill", session_id="id-1", ms=40, turns=2),
    ActionDone(t=7.0, action="close", session_id="id-1", ms=5)))
STEP_B = StepRecord("B", "local", "shared", "home", "id-1", lines=lines(
    ready(202), ActionDone(t=8.0, action="resume", session_id="id-1", ms=5),
    Turn(t=9.0, turn=1, kind="ask", session_id="id-1", prompt=FACT.question_prompt, answer=RECALLED, ms=9)))


def _record(*fill_sent: bool) -> ScenarioRecord:
    filler = [dataclasses.replace(evidence("A", filler_turn(n), sent, TOLD), at=3.0 + n,
                                  messages_received=1 + 2 * n)
              for n, sent in enumerate(fill_sent, start=1)]
    return ScenarioRecord("long", SCENARIO, [STEP_A, STEP_B],
                          [evidence("A", "1", True, TOLD), *filler, evidence("B", "1", True, TOLD)])


def test_the_filler_turns_records_are_the_steps_filler_not_turns_never_reported():
    a, b = ScenarioHistory.of(_record(True, True), FACT).steps
    assert [e.turn for e in a.filler] == ["fill-1", "fill-2"] and a.unreported == ()
    assert sorted(a.requests) == [1] and b.first_turn == 2  # the fill is no judged turn
    judged = judge_scenario(_record(True, True), FACT)
    assert [(t.turn, t.verdict) for t in judged.turns] == [(1, None), (2, Verdict.KEPT)]


@pytest.mark.parametrize("sent, label, seen", [
    ((True, True), "2 requests: 3–5 messages, with the fact in 2 of 2", True),
    ((True, False), "2 requests: 3–5 messages, with the fact in 1 of 2", False),
])
def test_the_diagram_draws_the_filler_turns_as_one_exchange_with_the_fact_as_the_witness_saw_it(sent, label, seen):
    drawn = sequence(ScenarioHistory.of(_record(*sent), FACT))
    filled = [m for m in drawn.messages if m.step == "A"]
    call = next(i for i, m in enumerate(filled) if m.label.startswith("send_and_wait × 2"))
    request, answer = filled[call + 1], filled[call + 2]
    assert (request.target, request.label, request.fact.seen) == (MODEL, label, seen)
    assert answer.label == "2 answers" and "never reported" not in " ".join(m.label for m in drawn.messages)


def test_a_fill_the_witness_has_no_record_of_says_so():
    record = msgspec.structs.replace(_record(), evidence=[e for e in _record().evidence if e.step == "B"])
    labels = [m.label for m in sequence(ScenarioHistory.of(record, FACT)).messages]
    assert "the model has no record of these turns" in labels


def test_the_slow_rung_is_out_of_the_quick_ladder_and_in_make_handoffs(tmp_path):
    rung = load(SCENARIO_DIR / "long-history-200-turns.toml")
    assert rung.tags == ("slow",) and rung.steps[0].filler_turns == 199  # the fact in turn 1 of 200
    assert Action.FILL in rung.steps[0].actions and rung.steps[1].loaded_all_events
    names = lambda chosen: {s.name for s in chosen}  # noqa: E731
    quick = names(_chosen(MatrixOptions([], tmp_path)))
    full = names(_chosen(MatrixOptions([], tmp_path, slow=True)))
    slow = {s.name for s in select([], tags=("slow",)) if "slow" in s.tags}
    assert rung.name in slow and rung.name not in quick and full == quick | slow
    assert names(_chosen(MatrixOptions([rung.name], tmp_path))) == {rung.name}  # named, it runs without --slow
    assert names(_chosen(MatrixOptions([], tmp_path, faults=True, slow=True))) == {s.name for s in select([], tags=(
        "faults",)) if "faults" in s.tags}
