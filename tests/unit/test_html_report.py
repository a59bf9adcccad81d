"""The HTML report without a browser: what a sequence diagram says happened (from a
stored record), where its parts go (pure layout), the ladder, and the page itself —
self-contained, one diagram per scenario that ran, the fact marked exactly where the
witness saw it. (tests/e2e/test_html_report.py opens a real run's page in Chromium.)"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from handoff.checker.checks import judge
from handoff.fact import Fact
from handoff.protocol import AFTER_TURN, ActionDone, ActionFailed, Backend, EventLog, Finished, Holding, Ready, Turn, encode
from handoff.report.diagram import ARROW_ROOM, ROW, TITLE_CHARACTER, label_width, layout
from handoff.report.html import marked, page
from handoff.report.ladder import ladder
from handoff.report.sequence import COORDINATOR, MODEL, Message, Participant, Sequence, sequence
from handoff.runs.record import FaultRecord, RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.witness.server import Evidence

FACT = Fact()
RECALLED = "Your favourite retail segment is 'At Risk'."


def lines(*events) -> list[str]:
    return [encode(event).decode().rstrip("\n") for event in events]


def ready(pid: int, host: str = "vm") -> Ready:
    return Ready(t=1.0, pid=pid, hostname=host, address=None, home="/h", runtime_version="1.0.102",
                 sdk_version="1.0.25", runtime_start_ms=400)


def evidence(step: str, turn: str, sent: bool, *conversation) -> Evidence:
    return Evidence(0.0, "s", step, "local", turn, len(conversation), sent, "r", "reply", conversation=conversation)


TOLD = ("user", f"<current_datetime>x</current_datetime>\n\n{FACT.remember_prompt}")
STEP_A = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(
    ready(101), ActionDone(t=2.0, action="create", session_id="id-1", ms=5),
    Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9),
    Holding(t=4.0, session_id="id-1", point=AFTER_TURN)),
    exit_code=-9, faults=[FaultRecord("kill", AFTER_TURN, 5.0, detail="SIGKILL to the worker and its runtime")])
STEP_B = StepRecord("B", "local", "shared", "home", "id-1", lines=lines(
    ready(202), ActionDone(t=6.0, action="resume", session_id="id-1", ms=5),
    Turn(t=7.0, turn=1, kind="ask", session_id="id-1", prompt=FACT.question_prompt, answer=RECALLED, ms=9),
    ActionDone(t=8.0, action="close", session_id="id-1", ms=1),
    EventLog(t=9.0, session_id="id-1", found=True, events=11, starts=1, resumes=1, closed_before_resume=False,
             resume_event_count=7),
    Finished(t=9.5, ok=True)), exit_code=0)
STEP_C = StepRecord("C", "local", "own", "home", "id-1", lines=lines(
    ready(303), ActionFailed(t=6.0, action="resume", message="access denied: not yours", refused=True),
    Finished(t=9.5, ok=False)), exit_code=0)
SCENARIO = Scenario("crash", "Crash", "proves P", "proves not D", (
    Step("A", ("create", "tell", "hold")), Step("B", ("resume", "ask", "close"), expect="kept"),
    Step("C", ("resume", "ask"), expect="refused", guarded=True, principal="bob")))
RECORD = ScenarioRecord("crash", SCENARIO, [STEP_A, STEP_B, STEP_C], [
    evidence("A", "1", True, TOLD),
    evidence("B", "1", True, TOLD, ("assistant", "OK"), ("user", FACT.question_prompt)),
], seconds=3.0)
SKIPPED = ScenarioRecord("far-away", Scenario("far-away", "T", "P", "D", (Step("A", ("create",)),)),
                         skipped="no namespaces here")


def run_record(*scenarios: ScenarioRecord, command: str = "run") -> RunRecord:
    return RunRecord("20260101T000000Z-abcdef", command, 0.0, 12.0,
                     Versions("0.1.0", "1.0.25", "1.0.102", "3.11", "Linux", "vm", 2),
                     RunOptions(FACT.value, FACT.topic, 2, Backend()), list(scenarios))


# --- sequence: what happened -----------------------------------------------------------

def test_the_lanes_are_the_coordinator_each_worker_and_its_runtime_the_stores_and_the_model():
    drawn = sequence(RECORD, FACT.value)
    assert [p.key for p in drawn.participants] == [
        COORDINATOR, "worker:A", "runtime:A", "worker:B", "runtime:B", "worker:C", "runtime:C", "store:shared",
        "store:own:C", MODEL]
    worker_b = drawn.participants[3]
    assert worker_b.details == ("pid 202 on vm", "alice, raw SDK")
    assert drawn.participants[5].details == ("pid 303 on vm", "bob, guarded")
    assert drawn.participants[4].details[0] == "Copilot 1.0.102"


def test_the_messages_tell_the_story_in_order():
    said = [(m.source, m.target, m.kind, m.label) for m in sequence(RECORD, FACT.value).messages]
    labels = [label for *_, label in said]
    assert said[0] == (COORDINATOR, "worker:A", "id", "start; id: id-1")
    assert ("worker:A", "runtime:A", "call", "create_session(session_id=id-1)") in said
    assert ("runtime:A", "store:shared", "write", "session.start written") in said
    # The kill comes after the worker said it holds, and nothing reports A's end.
    assert labels.index("holding at after-turn") + 1 == \
        labels.index("fault — kill: SIGKILL to the worker and its runtime")
    assert not any(source == "worker:A" and target == COORDINATOR for source, target, *_ in said)
    assert (COORDINATOR, "worker:B", "id", "start; id passed along: id-1") in said
    assert ("store:shared", "runtime:B", "load", "loaded 7 events") in said
    assert ("model", "runtime:B", "answer", f"“{RECALLED}”") in said
    assert ("worker:C", "worker:C", "refusal", "guard refused resume: access denied: not yours") in said


def test_a_request_is_marked_with_the_fact_exactly_as_the_witness_recorded_it():
    forgotten = ScenarioRecord("s", SCENARIO, [STEP_A, STEP_B], [evidence("A", "1", True, TOLD),
                                                               evidence("B", "1", False, ("user", "?"))])
    requests = [m for m in sequence(forgotten, FACT.value).messages if m.kind == "request"]
    assert [(m.step, m.fact.value, m.fact.seen) for m in requests] == [("A", "At Risk", True), ("B", "At Risk", False)]
    assert requests[1].label == "request: 1 message, without"


def test_a_turn_the_witness_never_saw_says_so_instead_of_a_request():
    unseen = ScenarioRecord("s", SCENARIO, [STEP_A], [])
    kinds = [(m.kind, m.label) for m in sequence(unseen, FACT.value).messages]
    assert ("error", "the model has no record of this turn") in kinds
    assert not [kind for kind, _ in kinds if kind == "request"]


def test_a_lab_run_has_no_coordinator():
    drawn = sequence(ScenarioRecord("lab", SCENARIO, [STEP_B], []), FACT.value, coordinated=False)
    assert COORDINATOR not in [p.key for p in drawn.participants]
    assert all(COORDINATOR not in (m.source, m.target) for m in drawn.messages)


def test_container_steps_draw_their_container_and_volumes_and_a_restart_keeps_its_volume():
    """As container-restart-anonymous-volume: A on an anonymous volume, B the same container
    restarted (its home is A's volume, not a new one), C a new container with a new volume."""
    on_a = {"a": "container"}
    restarted = Scenario("ctr", "T", "P", "D", (Step("A", ("create",), host="a", home="anonymous"),
                                                Step("B", ("resume",), host="a", restart=True),
                                                Step("C", ("resume",), host="a", home="anonymous")), hosts=on_a)
    steps = [StepRecord(name, "a", home, "home", "id-1", lines=lines(ready(1, "ctr-a-1" if name != "C" else "ctr-a-2"),
                                                                     Finished(t=2.0, ok=True)))
             for name, home in (("A", "anonymous"), ("B", "restarted"), ("C", "anonymous"))]
    drawn = sequence(ScenarioRecord("ctr", restarted, steps, []), FACT.value)
    lanes = {p.key: (p.title, p.details) for p in drawn.participants}
    assert [key for key in lanes if key.startswith("store:")] == ["store:anonymous:A", "store:anonymous:C"]
    assert lanes["store:anonymous:A"] == ("A's anonymous volume", ("lives with its container", "empty when it started"))
    assert lanes["worker:B"][1][0] == "pid 1 in container ctr-a-1"
    assert lanes["worker:C"][1][0] == "pid 1 in container ctr-a-2"
    starts = [m.label for m in drawn.messages if m.kind == "id" and m.source == COORDINATOR]
    assert starts == ["start; id: id-1", "restart its container; id passed along: id-1", "start; id passed along: id-1"]
    shared = Scenario("vol", "T", "P", "D", (Step("A", ("create",), host="a"), Step("B", ("resume",), host="b")),
                      hosts={"a": "container", "b": "container"})
    both = [StepRecord(n, n.lower(), "shared", "home", "id-1", lines=lines(ready(1), Finished(t=2.0, ok=True)))
            for n in ("A", "B")]
    [volume] = [p for p in sequence(ScenarioRecord("vol", shared, both, []), FACT.value).participants
                if p.kind == "store"]
    assert (volume.key, volume.title) == ("store:shared", "shared volume")


def test_long_labels_are_cut_but_kept_whole_for_the_tooltip():
    long = StepRecord("B", "local", "shared", "home", "x", lines=lines(
        ready(1), ActionFailed(t=2.0, action="resume", message="word " * 60), Finished(t=3.0, ok=False)))
    [failed] = [m for m in sequence(ScenarioRecord("s", SCENARIO, [long], []), FACT.value).messages
                if m.kind == "error"]
    assert len(failed.label) == 64 and failed.label.endswith("…") and failed.full.count("word") == 60


# --- layout: where it goes -----------------------------------------------------------------

def test_every_label_fits_between_the_lifelines_it_joins_and_every_message_has_its_own_row():
    diagram = layout(sequence(RECORD, FACT.value))
    xs = [lane.x for lane in diagram.lanes]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    for arrow in diagram.arrows:
        assert abs(arrow.x2 - arrow.x1) + 8 >= label_width(arrow.message) + ARROW_ROOM - 1
        assert min(arrow.x1, arrow.x2) <= arrow.label_x < max(arrow.x1, arrow.x2)
    rows = sorted([a.row for a in diagram.arrows] + [n.row for n in diagram.notes])
    assert rows == list(range(len(sequence(RECORD, FACT.value).messages)))
    ys = [a.y for a in sorted(diagram.arrows, key=lambda a: a.row)]
    assert all(later - earlier >= ROW for earlier, later in zip(ys, ys[1:]))
    assert all(note.x + note.width <= diagram.width for note in diagram.notes)
    assert diagram.lanes[-1].x + diagram.lanes[-1].width / 2 <= diagram.width


def test_workers_and_runtimes_are_shown_busy_only_while_their_step_runs():
    diagram = layout(sequence(RECORD, FACT.value))
    bars = {bar.key: bar for bar in diagram.activations}
    assert set(bars) == {"worker:A", "runtime:A", "worker:B", "runtime:B", "worker:C", "runtime:C"}
    assert bars["worker:A"].y2 < bars["worker:B"].y1 and bars["worker:B"].y2 < bars["worker:C"].y1


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.text("abcdefgh ()=_", min_size=0, max_size=90)),
    min_size=1, max_size=30))))
def test_any_sequence_lays_out_with_every_label_between_its_lifelines(case):
    count, said = case
    participants = tuple(Participant(f"p{i}", "worker", f"lane {i}" * (i % 3 + 1)) for i in range(count))
    messages = tuple(Message(f"p{a}", f"p{b}", label, "call") for a, b, label in said)
    diagram = layout(Sequence(participants, messages))
    for arrow in diagram.arrows:
        assert abs(arrow.x2 - arrow.x1) + 8 >= label_width(arrow.message) + ARROW_ROOM - 1
    for left, right in zip(diagram.lanes, diagram.lanes[1:]):  # headers never overlap
        assert left.x + left.width / 2 < right.x - right.width / 2
    assert len(diagram.arrows) + len(diagram.notes) == len(messages)


# --- the ladder ----------------------------------------------------------------------------

def test_the_ladder_has_a_rung_per_scenario_and_a_chip_per_question():
    judged = judge(run_record(RECORD, SKIPPED))
    drawn = ladder(judged)
    assert [rung.name for rung in drawn.rungs] == ["crash", "far-away"]
    crash, far = drawn.rungs
    assert [(c.text, c.as_expected) for c in crash.chips] == [("✓ kept", True), ("⊘ refused", True)]
    assert crash.standing.value == "as expected" and far.standing.value == "skipped"
    assert [c.text for c in far.chips] == ["– skipped"]
    assert crash.chips[0].x + crash.chips[0].width < crash.chips[1].x < crash.standing_x
    assert all(rung.standing_x + len(rung.standing.value) * TITLE_CHARACTER <= drawn.width for rung in drawn.rungs)


# --- the page --------------------------------------------------------------------------------

class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def of(self, tag: str, **wanted) -> list[dict]:
        return [attrs for name, attrs in self.found if name == tag and all(attrs.get(k) == v for k, v in wanted.items())]


def parsed(text: str) -> Elements:
    elements = Elements()
    elements.feed(text)
    return elements


def test_the_page_is_one_file_that_fetches_nothing():
    text = page(run_record(RECORD, SKIPPED), judge(run_record(RECORD, SKIPPED)))
    elements = parsed(text)
    assert not elements.of("link", rel="stylesheet") and not [a for a in elements.of("script") if "src" in a]
    assert not [a for _, a in elements.found for key in ("src", "href") if key in a and re.match(r"\w+://", a[key])]
    assert "<style>" in text and ":root" in text


def test_the_page_has_a_diagram_per_scenario_that_ran_and_says_why_one_did_not():
    record = run_record(RECORD, SKIPPED)
    text = page(record, judge(record))
    elements = parsed(text)
    assert [a["data-scenario"] for a in elements.of("svg") if "data-scenario" in a] == ["crash"]
    assert "far-away: T" in text and "skipped: no namespaces here" in text
    assert len(elements.of("details")) == 2  # one per question: B's kept, C's refused
    assert [a["data-verdict"] for a in elements.of("details")] == ["kept", "refused"]


def test_the_fact_is_marked_in_the_page_exactly_where_the_witness_saw_it():
    record = run_record(ScenarioRecord("s", SCENARIO, [STEP_A, STEP_B], [
        evidence("A", "1", True, TOLD), evidence("B", "1", False, ("user", FACT.question_prompt))]))
    text = page(record, judge(record))
    elements = parsed(text)
    assert [a["data-fact"] for a in elements.of("g") if "data-fact" in a] == ["seen", "absent"]
    assert len(elements.of("tspan", **{"class": "fact seen"})) == 1
    assert len(elements.of("tspan", **{"class": "fact absent"})) == 1
    # B's question: the conversation it was sent has no statement of the fact, so nothing is marked there.
    assert len(elements.of("mark", **{"class": "fact-seen"})) == 0
    assert 'data-fact-sent="False"' in text


def test_a_statement_of_the_fact_in_a_conversation_is_cut_out_to_be_marked():
    assert marked("a my favourite x is 'v' b my favourite x is 'v'", "my favourite x is 'v'") == (
        ("a ", False), ("my favourite x is 'v'", True), (" b ", False), ("my favourite x is 'v'", True))
    assert marked("nothing here", "my favourite x is 'v'") == (("nothing here", False),)


def test_text_from_the_record_is_escaped():
    hostile = ScenarioRecord("s", SCENARIO, [StepRecord("A", "local", "shared", "home", "x", lines=lines(
        ready(1), ActionFailed(t=2.0, action="resume", message="<script>alert(1)</script>")))], [])
    text = page(run_record(hostile), judge(run_record(hostile)))
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)" in text


def test_a_request_for_a_turn_the_worker_never_reported_is_drawn_where_it_happened():
    """A worker killed while its runtime writes the answer reports no turn, but the witness
    saw the request: the diagram shows it, between what came before and the kill."""
    killed = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(
        ready(101), ActionDone(t=2.0, action="resume", session_id="id-1", ms=5),
        Holding(t=4.0, session_id="id-1", point="inside-write", during="append")),
        exit_code=-9, faults=[FaultRecord("kill", "inside-write", 5.0, detail="SIGKILL")])
    seen = Evidence(3.0, "s", "A", "local", "1", 3, True, "recalled", RECALLED, conversation=(TOLD,))
    labels = [m.label for m in sequence(ScenarioRecord("s", SCENARIO, [killed], [seen]), FACT.value).messages]
    at = labels.index("turn 1 (never reported) request: 3 messages, with")
    assert labels.index("resume_session(id-1)") < at < labels.index("holding at inside-write during append")
