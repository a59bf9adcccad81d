"""The HTML report without a browser: what a sequence diagram says happened (from a
stored record), where its parts go (pure layout), the ladder, and the page itself —
self-contained, one diagram per scenario that ran, the fact marked exactly where the
witness saw it. (tests/e2e/test_html_report.py opens a real run's page in Chromium.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from handoff.checker.checks import judge
from handoff.fact import Fact
from handoff.protocol import ActionDone, ActionFailed, Backend, EventLog, Finished, Holding, Ready, Turn, encode
from handoff.report import summary
from handoff.report.diagram import ACTIVATION, ARROW_ROOM, MARGIN, ROW, WIDTH, label_width, layout, pieces, style
from handoff.report.html import marked, page
from handoff.report.ladder import ladder
from handoff.report.sequence import (COORDINATOR, LABEL_CHARACTERS, MODEL, FactMark, Message, Participant, Sequence,
                                     sequence)
from handoff.report.typeset import text_px, text_width, wrap
from handoff.runs.history import ScenarioHistory
from handoff.runs.record import FaultRecord, RunOptions, RunRecord, ScenarioRecord, StepRecord, Versions
from handoff.scenario import Scenario, Step
from handoff.witness.evidence import Evidence
from handoff.words import FaultPoint

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
    Holding(t=4.0, session_id="id-1", point=FaultPoint.AFTER_TURN)),
    exit_code=-9, faults=[FaultRecord("kill", FaultPoint.AFTER_TURN, 5.0, detail="SIGKILL to the worker and its runtime")])
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
    drawn = sequence(ScenarioHistory.of(RECORD, FACT))
    assert [p.key for p in drawn.participants] == [
        COORDINATOR, "worker:A", "runtime:A", "worker:B", "runtime:B", "worker:C", "runtime:C", "store:shared",
        "store:own:C", MODEL]
    worker_b = drawn.participants[3]
    assert worker_b.details == ("pid 202 on vm", "alice, raw SDK")  # the scenario has principals: C is bob's
    assert drawn.participants[5].details == ("pid 303 on vm", "bob, guarded")
    assert drawn.participants[4].details[0] == "Copilot 1.0.102"


def test_a_step_in_a_browser_is_drawn_as_the_chat_server_its_device_drives():
    web = Scenario("web", "T", "P", "D", (Step("A", ("create", "tell", "hold"), guarded=True, device="laptop"),
                                          Step("B", ("resume", "ask"), guarded=True)))
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("web", web, [STEP_A, STEP_B], []), FACT))
    lanes = [p for p in drawn.participants if p.kind == "worker"]
    assert [lane.title for lane in lanes] == ["chat server A", "worker B"]
    assert lanes[0].details[1:] == ("laptop's browser drives its page", "alice, guarded")


def test_a_raw_worker_has_no_principal_unless_its_scenario_names_several():
    plain = Scenario("plain", "T", "P", "D", (Step("A", ("create", "tell", "hold")), Step("B", ("resume", "ask"))))
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("plain", plain, [STEP_A, STEP_B], []), FACT))
    assert [p.details[1] for p in drawn.participants if p.kind == "worker"] == ["raw SDK, no principal"] * 2
    guarded = Scenario("g", "T", "P", "D", (Step("A", ("create", "tell", "hold"), guarded=True),
                                            Step("B", ("resume", "ask"))))  # alice's guarded path, then the raw one
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("g", guarded, [STEP_A, STEP_B], []), FACT))
    assert [p.details[1] for p in drawn.participants if p.kind == "worker"] == ["alice, guarded",
                                                                                "raw SDK, no principal"]


def test_a_node_workers_calls_are_named_as_its_sdk_spells_them_and_each_worker_says_its_sdk():
    """A scenario across SDKs: the Python worker's arrows say create_session, the Node.js
    worker's resumeSession, sendAndWait, getSessionMetadata; each worker names its SDK."""
    import msgspec

    node_ready = msgspec.structs.replace(ready(202), sdk_version="node@1.0.14", sdk_language="node")
    told = StepRecord("A", "local", "shared", "home", "id-1", lines=lines(
        ready(101), ActionDone(t=2.0, action="create", session_id="id-1", ms=5),
        Turn(t=3.0, turn=1, kind="tell", session_id="id-1", prompt=FACT.remember_prompt, answer="OK", ms=9),
        ActionDone(t=3.5, action="close", session_id="id-1", ms=1), Finished(t=4.0, ok=True)), exit_code=0)
    asked = StepRecord("B", "local", "shared", "home", "id-1", lines=lines(
        node_ready, ActionDone(t=6.0, action="resume", session_id="id-1", ms=5),
        Turn(t=7.0, turn=1, kind="ask", session_id="id-1", prompt=FACT.question_prompt, answer=RECALLED, ms=9),
        ActionDone(t=7.5, action="metadata", session_id="id-1", ms=1, found=True),
        ActionDone(t=7.6, action="list", session_id="id-1", ms=1, listed=("id-1",)),
        ActionDone(t=8.0, action="close", session_id="id-1", ms=1), Finished(t=9.5, ok=True)), exit_code=0)
    made = StepRecord("C", "local", "shared", "home", None, lines=lines(
        node_ready, ActionDone(t=10.0, action="create", session_id="id-2", ms=5), Finished(t=11.0, ok=True)),
        exit_code=0)
    across = Scenario("across", "T", "P", "D", (Step("A", ("create", "tell", "close")),
                                                Step("B", ("resume", "ask", "metadata", "list", "close"),
                                                     expect="kept", sdk="node@1.0.14"),
                                                Step("C", ("create",), sdk="node@1.0.14")))
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("across", across, [told, asked, made], []), FACT))
    calls = {step: [m.label for m in drawn.messages if m.source == f"worker:{step}" and m.kind == "call"]
             for step in "ABC"}
    assert calls["A"] == ["start its runtime (400 ms)", "create_session(session_id=id-1)", "send_and_wait: tell (9 ms)",
                          "disconnect() — the close"]
    assert calls["B"] == ["start its runtime (400 ms)", "resumeSession(id-1)", "sendAndWait: ask (9 ms)",
                          "getSessionMetadata(id-1)", "listSessions()", "disconnect() — the close"]
    assert calls["C"][1] == "createSession({ sessionId: id-2 })"
    workers = [p.details[-1] for p in drawn.participants if p.kind == "worker"]
    assert workers == ["Python SDK 1.0.25", "Node.js SDK 1.0.14", "Node.js SDK 1.0.14"]
    # A scenario on one SDK says nothing of it, as before.
    plain = Scenario("plain", "T", "P", "D", (Step("A", ("create", "tell", "close")),))
    alone = sequence(ScenarioHistory.of(ScenarioRecord("plain", plain, [told], []), FACT))
    assert [p.details for p in alone.participants if p.kind == "worker"] == [("pid 101 on vm", "raw SDK, no principal")]


def test_a_step_given_an_unknown_id_is_said_to_get_a_new_random_one():
    """The coordinator makes a fresh id for such a step (scenario_run.py: new_session_id):
    the step may create it, so "never created" would not be true."""
    fresh = Scenario("fresh", "T", "P", "D", (Step("A", ("create",)), Step("B", ("create",), session="unknown")))
    steps = [StepRecord("A", "local", "shared", "home", "id-1", lines=lines(ready(1), Finished(t=2.0, ok=True))),
             StepRecord("B", "local", "shared", "home", "handoff-0123456789abcdef",
                        lines=lines(ready(2), Finished(t=3.0, ok=True)))]
    starts = [m.label for m in sequence(ScenarioHistory.of(ScenarioRecord("fresh", fresh, steps, []), FACT)).messages
              if m.source == COORDINATOR]
    assert starts == ["start; id: id-1", "start; a new random id: handoff-0123456789abcdef"]


def test_the_messages_tell_the_story_in_order():
    said = [(m.source, m.target, m.kind, m.label) for m in sequence(ScenarioHistory.of(RECORD, FACT)).messages]
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
    requests = [m for m in sequence(ScenarioHistory.of(forgotten, FACT)).messages if m.kind == "request"]
    assert [(m.step, m.fact.value, m.fact.seen) for m in requests] == [("A", "At Risk", True), ("B", "At Risk", False)]
    assert requests[1].label == "request: 1 message, without"


def test_a_turn_the_witness_never_saw_says_so_instead_of_a_request():
    unseen = ScenarioRecord("s", SCENARIO, [STEP_A], [])
    kinds = [(m.kind, m.label) for m in sequence(ScenarioHistory.of(unseen, FACT)).messages]
    assert ("error", "the model has no record of this turn") in kinds
    assert not [kind for kind, _ in kinds if kind == "request"]


def test_a_lab_run_has_no_coordinator():
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("lab", SCENARIO, [STEP_B], []), FACT), coordinated=False)
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
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("ctr", restarted, steps, []), FACT))
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
    [volume] = [p for p in sequence(ScenarioHistory.of(ScenarioRecord("vol", shared, both, []), FACT)).participants
                if p.kind == "store"]
    assert (volume.key, volume.title) == ("store:shared", "shared volume")


def test_labels_are_whole_and_only_an_absurdly_long_one_is_cut():
    """An error, a refusal's reason, an id: whole, however long the lab makes them (the
    diagram wraps them); a label longer than any it makes is cut, and whole in its tooltip."""
    reason = "the session's log changed since its last close (extended without a receipt: 7 events " \
             "were appended after the last close)"
    long_id = "hs-" + "g" * 40
    record = StepRecord("B", "local", "shared", "home", long_id, lines=lines(
        ready(1), ActionDone(t=1.5, action="resume", session_id=long_id, ms=1),
        ActionFailed(t=2.0, action="resume", message="word " * 60),
        ActionFailed(t=2.5, action="resume", message=reason, refused=True),
        ActionFailed(t=2.7, action="ask", message="x" * 2000), Finished(t=3.0, ok=False)))
    said = sequence(ScenarioHistory.of(ScenarioRecord("s", SCENARIO, [record], []), FACT)).messages
    labels = [m.label for m in said]
    assert f"start; id: {long_id}" in labels and f"resume_session({long_id})" in labels
    assert f"resume failed: {'word ' * 59}word" in labels
    assert f"guard refused resume: {reason}" in labels
    [absurd] = [m for m in said if m.label.startswith("ask failed")]
    assert len(absurd.label) == LABEL_CHARACTERS and absurd.label.endswith("…") and absurd.full.count("x") == 2000
    assert not [m for m in said if m is not absurd and "…" in m.label]


# --- layout: where it goes -----------------------------------------------------------------

def text(lines) -> str:
    return "".join(piece for line in lines for piece, _ in line)


def lifelines(diagram, arrow) -> float:
    """The distance between the two lifelines an arrow joins (it stops at their bars)."""
    return abs(arrow.x2 - arrow.x1) + ACTIVATION


def assert_whole_and_within(diagram) -> None:
    """Every label whole (its lines joined are its text), every line between the lifelines
    its arrow joins or inside its note's box, every note on the page."""
    for arrow in diagram.arrows:
        assert text(arrow.lines) == text((pieces(arrow.message),))
        for line in arrow.lines:
            assert text_width(line, style(arrow.message.kind)) + ARROW_ROOM <= lifelines(diagram, arrow) + 0.01 or \
                len(text((line,)).strip()) == 1  # a line of one character is as narrow as it gets
        assert min(arrow.x1, arrow.x2) <= arrow.label_x < max(arrow.x1, arrow.x2)
    for note in diagram.notes:
        assert text(note.lines) == text((pieces(note.message),))
        assert all(text_width(line, style(note.message.kind)) + 20 <= note.width + 0.01 for line in note.lines)
        assert MARGIN <= note.x + 0.01 and note.x + note.width <= diagram.width
    assert all(lane.left >= 0 and lane.left + lane.width <= diagram.width for lane in diagram.lanes)


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def assert_no_headers_overlap(diagram) -> None:
    for i, one in enumerate(diagram.lanes):
        for other in diagram.lanes[i + 1:]:
            assert not (overlap((one.left, one.left + one.width), (other.left, other.left + other.width)) and
                        overlap((one.top, one.top + one.height), (other.top, other.top + other.height))), \
                (one.participant.key, other.participant.key)


def test_each_steps_worker_and_runtime_share_a_column_and_appear_where_their_step_begins():
    diagram = layout(sequence(ScenarioHistory.of(RECORD, FACT)))
    lanes = {lane.participant.key: lane for lane in diagram.lanes}
    assert len({lanes[f"worker:{s}"].x for s in "ABC"}) == 1 and len({lanes[f"runtime:{s}"].x for s in "ABC"}) == 1
    xs = [lanes[key].x for key in (COORDINATOR, "worker:A", "runtime:A", "store:shared", "store:own:C", MODEL)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    rows = {}
    for part in (*diagram.arrows, *diagram.notes):
        rows.setdefault(part.message.step, []).append(part.y)
    for earlier, later in ("AB", "BC"):  # a step's headers come after the last step's messages, before its own
        assert max(rows[earlier]) < lanes[f"worker:{later}"].top < min(rows[later])
        assert lanes[f"worker:{later}"].top == lanes[f"runtime:{later}"].top
        assert lanes[f"worker:{earlier}"].end < lanes[f"worker:{later}"].top  # a step's process ends with it
    for key in (COORDINATOR, "store:shared", MODEL, "worker:A"):  # the others head the diagram and last
        assert lanes[key].top == MARGIN
    assert lanes[MODEL].end > max(rows["C"])
    assert_no_headers_overlap(diagram)


def test_every_label_fits_between_the_lifelines_it_joins_and_every_message_has_its_own_row():
    diagram = layout(sequence(ScenarioHistory.of(RECORD, FACT)))
    assert diagram.width <= WIDTH
    assert_whole_and_within(diagram)
    rows = sorted([a.row for a in diagram.arrows] + [n.row for n in diagram.notes])
    assert rows == list(range(len(sequence(ScenarioHistory.of(RECORD, FACT)).messages)))
    ys = [part.y + (part.height - 7 if hasattr(part, "height") else 0)
          for part in sorted((*diagram.arrows, *diagram.notes), key=lambda part: part.row)]
    assert all(later - earlier >= ROW - 0.01 for earlier, later in zip(ys, ys[1:]))


def test_a_long_label_wraps_onto_lines_of_its_own_row_and_a_long_note_takes_the_roomier_side():
    """Long ids, a long error, the guard's reason: every word kept, the rows as tall as
    their lines, the diagram no wider than the page's column."""
    long_id = "hs-" + "ghijklmnopqrstuv" * 3
    reason = "runtime 1.0.92 may not resume a session last written by runtime 1.0.102: an older runtime can " \
             "misread a newer one's log (declare the pair known-good once it is measured)"
    steps = [StepRecord(name, "local", "shared", "home", long_id, lines=lines(
        ready(n), ActionDone(t=2.0, action="resume", session_id=long_id, ms=5),
        ActionFailed(t=3.0, action="ask", message="Session error: Execution failed: InvalidArg, No GitHub OAuth "
                                                  "token or Copilot HMAC key provided " * 2),
        ActionFailed(t=4.0, action="close", message=reason, refused=True), Finished(t=5.0, ok=False)))
        for n, name in enumerate(("first-step-with-a-long-name", "second", "third", "fourth"))]
    scenario = Scenario("long", "T", "P", "D", tuple(Step(s.step, ("resume", "ask", "close"), guarded=True)
                                                     for s in steps))
    diagram = layout(sequence(ScenarioHistory.of(ScenarioRecord("long", scenario, steps, []), FACT)))
    assert diagram.width <= WIDTH
    assert_whole_and_within(diagram)
    assert_no_headers_overlap(diagram)
    wrapped = [part for part in (*diagram.arrows, *diagram.notes) if len(part.lines) > 1]
    assert wrapped and all(text(part.lines) == part.message.label for part in wrapped)
    for arrow in diagram.arrows:  # a row is as tall as its lines: the label's top clears the row above
        above = [part for part in (*diagram.arrows, *diagram.notes) if part.row == arrow.row - 1]
        if above:
            bottom = above[0].y + (above[0].height if hasattr(above[0], "height") else 0)
            assert arrow.y - 6 - (len(arrow.lines) - 1) * 15 - 12 >= bottom
    refusals = [note for note in diagram.notes if note.message.kind == "refusal"]
    assert len(refusals) == 4 and all(reason in text(note.lines) for note in refusals)


def test_wrapping_keeps_every_character_and_the_fact_with_its_mark():
    message = Message("a", "b", "request: 3 messages, with", "request", fact=FactMark("At Risk", True))
    line = pieces(message)
    for width in (20.0, 40.0, 100.0, 120.0, 400.0):
        lines = wrap(line, width, "regular")
        assert text(lines) == "request: 3 messages, with 'At Risk' ✓"
        if width >= text_width(line[1:], "regular"):  # where the fact and its mark fit on a line, they share one
            together = [line for line in lines if any(cls.startswith("fact") for _, cls in line)]
            assert len(together) == 1 and any(cls == "mark" for _, cls in together[0])
    assert len(wrap(line, 1000.0, "regular")) == 1 and label_width(message) == text_width(line, "regular")
    assert wrap((("x" * 30, ""),), text_px("x" * 10), "regular") == ((("x" * 10, ""),),) * 3  # no space: cut hard
    assert text_px("m", "bold") > text_px("m") > text_px("i") and text_px("i", "mono") == text_px("m", "mono")


def test_workers_and_runtimes_are_shown_busy_only_while_their_step_runs():
    diagram = layout(sequence(ScenarioHistory.of(RECORD, FACT)))
    bars = {bar.key: bar for bar in diagram.activations}
    assert set(bars) == {"worker:A", "runtime:A", "worker:B", "runtime:B", "worker:C", "runtime:C"}
    assert bars["worker:A"].y2 < bars["worker:B"].y1 and bars["worker:B"].y2 < bars["worker:C"].y1


LABELS = st.text("abcdefgh ()=_-", min_size=0, max_size=160)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), LABELS), min_size=1, max_size=30))))
def test_any_sequence_lays_out_with_every_label_whole_between_its_lifelines(case):
    count, said = case
    participants = tuple(Participant(f"p{i}", "worker", f"lane {i}" * (i % 3 + 1)) for i in range(count))
    messages = tuple(Message(f"p{a}", f"p{b}", label, "call") for a, b, label in said)
    diagram = layout(Sequence(participants, messages))
    assert_whole_and_within(diagram)
    assert_no_headers_overlap(diagram)
    for left, right in zip(diagram.lanes, diagram.lanes[1:]):  # one column each, left to right
        assert left.x + left.width / 2 < right.x - right.width / 2
    assert len(diagram.arrows) + len(diagram.notes) == len(messages)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["coordinator", "worker", "runtime", "store", "model"]),
                                   st.sampled_from(["coordinator", "worker", "runtime", "store", "model"]), LABELS,
                                   st.sampled_from(["call", "id", "error", "refusal", "answer"])),
                         min_size=0, max_size=8), min_size=1, max_size=5))
def test_any_run_of_steps_fits_the_page_with_every_label_whole(steps):
    """Steps one after another, each with a worker and a runtime: with every label up to
    160 characters, the diagram is no wider than the page's column."""
    participants = [Participant(COORDINATOR, "coordinator", "coordinator", ("passes the id along",))]
    messages = []
    for index, step in enumerate(steps):
        name = f"step-{index}"
        participants += [Participant(f"worker:{name}", "worker", f"worker {name}", ("pid 12345 on vm",)),
                         Participant(f"runtime:{name}", "runtime", f"runtime {name}", ("Copilot 1.0.102",))]
        keys = {"coordinator": COORDINATOR, "worker": f"worker:{name}", "runtime": f"runtime:{name}",
                "store": "store:shared", "model": MODEL}
        messages += [Message(keys[a], keys[b], label, kind, name) for a, b, label, kind in step]
    participants += [Participant("store:shared", "store", "shared home", ("one COPILOT_HOME", "for every step")),
                     Participant(MODEL, "model", "witness model", ("knows only what it is sent",))]
    diagram = layout(Sequence(tuple(participants), tuple(messages)))
    assert diagram.width <= WIDTH
    assert_whole_and_within(diagram)
    assert_no_headers_overlap(diagram)
    workers = {lane.x for lane in diagram.lanes if lane.participant.kind == "worker"}
    assert len(workers) == 1  # one column for every step's worker


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
    assert all(rung.standing_x + text_px(rung.standing.value, "bold") <= drawn.width for rung in drawn.rungs)
    assert drawn.groups == ()  # without the scenarios, nothing to group by


def test_the_ladder_groups_its_rungs_by_what_each_tests_and_says_what_each_proves():
    def named(name, *steps, **more):
        return ScenarioRecord(name, Scenario(name, name, f"{name} proves a lot. More.", "Nothing else: really.",
                                             steps, **more), [], skipped="not here")
    records = [named("two-processes", Step("A", ("create",)), Step("B", ("resume",)),
                     proves_in_short="a new process resumes it", does_not_prove_in_short="another machine"),
               named("one-process", Step("A", ("create", "resume"))),
               named("bob", Step("A", ("create",)), Step("B", ("resume",), principal="bob", guarded=True)),
               named("second-process", Step("A", ("create",)), Step("B", ("resume",)))]
    judged = judge(run_record(*records))
    drawn = ladder(judged, {r.name: r.scenario for r in records})
    assert [(g.condition, g.rungs) for g in drawn.groups] == [
        ("same process", 1), ("new process", 2), ("authorization", 1)]  # summary.CONDITIONS' order
    assert [(r.name, r.condition) for r in drawn.rungs] == [
        ("one-process", "same process"), ("two-processes", "new process"), ("second-process", "new process"),
        ("bob", "authorization")]  # ladder order within a group
    assert [r.condition for r in drawn.rungs] == [summary.condition(r.scenario) for r in
                                                  (records[1], records[0], records[3], records[2])]
    said = {r.name: [text(s.lines) for s in r.meaning] for r in drawn.rungs}
    assert said["two-processes"] == ["proves a new process resumes it", "does not prove another machine"]
    assert said["one-process"] == ["proves one-process proves a lot", "does not prove nothing else"]  # first clauses
    tops = [g.y for g in drawn.groups]
    for rung in drawn.rungs:  # under its group's heading, beside its chips, within the picture
        heading = max(top for top, g in zip(tops, drawn.groups) if g.condition == rung.condition)
        assert rung.y > heading
        for statement in rung.meaning:
            assert statement.lines[0][0] in (("proves ", "key"), ("does not prove ", "key"))
            assert rung.meaning_x > rung.standing_x + text_px(rung.standing.value, "bold")
            assert all(rung.meaning_x + text_width(line, "small") <= drawn.width for line in statement.lines)
    assert drawn.width <= WIDTH
    narrow = ladder(judged, {r.name: r.scenario for r in records}, width=220)  # no room beside: under the name
    for rung in narrow.rungs:
        assert rung.meaning_x == narrow.name_x and rung.meaning[0].ys[0] > rung.y + 10
        assert all(rung.meaning_x + text_width(line, "small") <= 220 for s in rung.meaning for line in s.lines)
    assert [text(s.lines) for s in narrow.rungs[1].meaning] == said["two-processes"]  # wrapped, every word kept
    assert len(narrow.rungs[1].meaning[0].lines) + len(narrow.rungs[1].meaning[1].lines) > 2


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


def test_the_sections_come_in_the_ladders_groups():
    """The scenarios' sections in the order of the ladder's rungs, each group under its
    condition's heading; the guarded rung is authorization's, after the skipped one."""
    record = run_record(RECORD, SKIPPED)
    elements = parsed(page(record, judge(record)))
    sections = [(a.get("data-condition"), a.get("data-scenario")) for a in elements.of("section")
                if "data-condition" in a or "data-scenario" in a]
    assert sections == [("same process", None), (None, "far-away"), ("authorization", None), (None, "crash")]
    rungs = [a["data-scenario"] for a in elements.of("g") if a.get("class", "").startswith("rung")]
    assert rungs == ["far-away", "crash"]


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
    drawn = sequence(ScenarioHistory.of(ScenarioRecord("s", SCENARIO, [killed], [seen]), FACT))
    labels = [m.label for m in drawn.messages]
    at = labels.index("turn 1 (never reported) request: 3 messages, with")
    assert labels.index("resume_session(id-1)") < at < labels.index("holding at inside-write during append")


RENDER = ("import hashlib; from handoff.checker.checks import judge; from handoff.report.html import page; "
          "from tests.unit.test_html_report import RECORD, run_record; "
          "r = run_record(RECORD, command=\"lab\"); print(hashlib.sha256(page(r, judge(r)).encode()).hexdigest())")


def test_the_page_is_the_same_bytes_in_every_process():
    """A stored run's page is made again by `handoff report` in another process, whose
    hash seed differs: nothing on it may follow a set's order. (A lab run's page, whose
    first message starts two lanes at once, came out in 7 ways from 12 seeds.)"""
    root = Path(__file__).resolve().parents[2]
    made = {subprocess.run([sys.executable, "-c", RENDER], cwd=root, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}).stdout
            for seed in map(str, range(1, 13))}
    assert len(made) == 1
