"""Reports show an id that carries a secret or personal data redacted, in every format
and wherever it appears (fields, a worker's raw lines, error messages, the diagrams),
while the record they are made from keeps it: the checker judges the raw evidence.
(tests/e2e/test_security.py renders a real `secret-in-id` run the same way.)"""

from __future__ import annotations

import json
from types import SimpleNamespace

import msgspec
import pytest

from handoff.checker.checks import judge
from handoff.protocol import ActionDone, ActionFailed, EventLog, Finished, Turn
from handoff.report.formats import FORMATS, as_json, markdown, render, rendered
from handoff.report.html import page
from handoff.report.redact import for_display
from handoff.report.sessions import sessions_table
from handoff.report.terminal import body
from handoff.runs.record import ScenarioRecord, StepRecord, decode, encode
from handoff.scenario import Scenario, Step
from tests.unit.test_html_report import FACT, RECALLED, evidence, lines, ready, run_record

PHONE = "4155550123"
ID = f"cust-{PHONE}"
SHOWN = "cust…(redacted: phone number)"


def _record():
    raw = StepRecord("raw", "local", "shared", "home", ID, lines=lines(
        ready(101), ActionDone(t=2.0, action="create", session_id=ID, ms=5),
        Turn(t=3.0, turn=1, kind="tell", session_id=ID, prompt=FACT.remember_prompt, answer="OK", ms=9),
        ActionDone(t=3.5, action="list", session_id=ID, ms=2, listed=(ID, "handoff-0123456789abcdef")),
        Turn(t=4.0, turn=2, kind="ask", session_id=ID, prompt=FACT.question_prompt, answer=RECALLED, ms=9),
        ActionFailed(t=4.5, action="metadata", message=f"Session not found: {ID}"),
        ActionDone(t=5.0, action="close", session_id=ID, ms=1),
        EventLog(t=6.0, session_id=ID, found=False), Finished(t=7.0, ok=False)),
        exit_code=0, stderr_tail=f"open ~/.copilot/session-state/{ID}/events.jsonl", notes=[f"copied {ID}"])
    guarded = StepRecord("guarded", "local", "shared", "home", ID, lines=lines(
        ready(202), ActionFailed(t=8.0, action="create", message="session id refused: it was not minted for you "
                                 "by the app; it also contains a phone number", refused=True),
        Finished(t=9.0, ok=False)), exit_code=0)
    scenario = Scenario("secret-in-id", "Secret in the id", "proves P", "proves not D", (
        Step("raw", ("create", "tell", "list", "ask", "metadata", "close"), expect="kept"),
        Step("guarded", ("create", "ask", "close"), expect="refused", guarded=True, session="scenario")),
        session_id=ID)
    return run_record(ScenarioRecord("secret-in-id", scenario, [raw, guarded], [
        evidence("raw", "1", True, ("user", FACT.remember_prompt)),
        evidence("raw", "2", True, ("user", FACT.remember_prompt), ("assistant", "OK"), ("user", FACT.question_prompt)),
    ], seconds=3.0))


RECORD = _record()
JUDGEMENT = judge(RECORD)


def _every_report() -> dict[str, str]:
    made = {form: rendered(RECORD, JUDGEMENT, form) for form in FORMATS}
    made |= {f"{form} --wide": rendered(RECORD, JUDGEMENT, form, wide=True) for form in ("table", "markdown")}
    made |= {"render": render(RECORD, JUDGEMENT), "markdown()": markdown(RECORD, JUDGEMENT, wide=True),
             "as_json": as_json(RECORD, JUDGEMENT).decode(), "page": page(RECORD, JUDGEMENT),
             "body (handoff run)": body(RECORD, JUDGEMENT), "body --wide": body(RECORD, JUDGEMENT, wide=True)}
    return made


def test_the_record_has_the_phone_number_in_every_place_a_report_could_show():
    stored = encode(RECORD).decode()
    assert stored.count(PHONE) >= 12  # fields, raw lines, an error message, stderr, a note


@pytest.mark.parametrize("form, report", list(_every_report().items()))
def test_no_report_shows_the_phone_number(form, report):
    assert PHONE not in report and "4155" not in report


def test_the_reports_say_it_was_redacted_where_the_id_was():
    html, as_data = page(RECORD, JUDGEMENT), json.loads(as_json(RECORD, JUDGEMENT))
    assert f"create_session(session_id={SHOWN})" in html and f"no events.jsonl for {SHOWN}" in html
    shown = as_data["record"]["scenarios"][0]
    assert shown["scenario"]["session_id"] == SHOWN and shown["steps"][0]["session_id"] == SHOWN
    assert shown["steps"][0]["stderr_tail"] == f"open ~/.copilot/session-state/{SHOWN}/events.jsonl"
    raw_create = json.loads(shown["steps"][0]["lines"][1])  # a raw line stays a valid event, redacted inside
    assert raw_create["session_id"] == SHOWN
    listed = json.loads(shown["steps"][0]["lines"][3])["listed"]
    assert listed == [SHOWN, "handoff-0123456789abcdef"]  # an id that carries nothing is left as it is
    assert as_data["judgement"]["scenarios"][0]["turns"][1]["session"] == SHOWN


def test_the_record_keeps_the_raw_evidence_and_the_verdicts_do_not_change():
    shown_record, shown_judgement = for_display(RECORD, JUDGEMENT)
    assert RECORD.scenarios[0].steps[0].session_id == ID and PHONE in encode(RECORD).decode()  # untouched
    assert PHONE not in encode(shown_record).decode()
    assert decode(encode(shown_record)) == shown_record  # still a record a stored run could be
    verdicts = [(t.turn, t.verdict, t.as_expected) for t in JUDGEMENT.turns]
    assert [(t.turn, t.verdict, t.as_expected) for t in shown_judgement.turns] == verdicts
    assert [(t.turn, t.verdict, t.as_expected) for t in judge(shown_record).turns] == verdicts
    assert shown_judgement.exit_code() == JUDGEMENT.exit_code()


def test_a_run_whose_ids_carry_nothing_is_shown_as_it_is():
    from tests.unit.test_html_report import RECORD as PLAIN

    record = run_record(PLAIN)
    judgement = judge(record)
    assert for_display(record, judgement) == (record, judgement)
    shown_record, shown_judgement = for_display(record, judgement)
    assert shown_record is record and shown_judgement is judgement  # no copy made


def test_an_id_escaped_in_a_raw_line_is_redacted_too():
    odd = "cust-4155550123-ü"  # written \u00fc-escaped by some JSON encoders
    line = json.dumps({"event": "action", "action": "create", "session_id": odd, "ms": 1, "t": 1.0})
    assert "\\u00fc" in line
    step = StepRecord("raw", "local", "shared", "home", odd, lines=[line])
    record = run_record(ScenarioRecord("x", Scenario("x", "T", "P", "D", (Step("raw", ("create",)),)), [step]))
    shown, _ = for_display(record, judge(record))
    assert PHONE not in msgspec.json.encode(shown).decode()


def test_the_registry_listing_shows_such_an_id_redacted():
    row = SimpleNamespace(session_id=ID, owner="alice", created_at=None, created_on=None, last_resumed_at=None,
                          last_resumed_on=None, created_runtime=None, created_sdk=None, runtime_version=None,
                          sdk_version=None, turns=1, summary=None)
    plain = SimpleNamespace(**{**vars(row), "session_id": "analyst-demo"})
    table = sessions_table([("", [row, plain])])
    assert PHONE not in table and SHOWN in table and "analyst-demo" in table
