"""The words' values are what scenario files, the worker protocol and stored runs say: a
stored run must read, and re-judge, as it did (handoff/words.py). A member may be renamed;
its value may not, so the values are written out here once more, on purpose."""

from __future__ import annotations

import msgspec
import pytest

from handoff import words

STORED = {
    words.Verdict: ("kept", "lost", "unknown", "failed-loudly", "lost-silently", "refused", "no-provider", "undelivered",
                    "skipped", "crashed"),
    words.TurnKind: ("tell", "ask"),
    words.NoTurn: ("step", "scenario"),
    words.Action: ("mint", "mint-for-key", "create", "create-without-id", "resume", "resume-most-recent", "tell",
                   "look-up", "ask", "close", "compact", "metadata", "list", "discover", "concurrent-resume-and-ask", "hold", "restart-runtime",
                   "fill"),
    words.WorkerStage: ("read-spec", "start", "stop"),
    words.HomeKind: ("shared", "own", "copied", "anonymous", "restarted"),
    words.StoreKind: ("home", "sqlite", "postgres"),
    words.HostKind: ("local", "namespace", "ssh", "container", "pod"),
    words.StepSession: ("passed", "unknown", "scenario"),
    words.StepProvider: ("passed", "omitted"),
    words.FaultKind: ("kill", "kill-runtime", "store-outage", "store-restart", "partition", "disk-full", "tear-log",
                      "corrupt-log", "cut-copy", "tamper"),
    words.FaultPoint: ("before-step", "mid-turn", "after-turn", "inside-write", "inside-tool", "inside-permission",
                       "hold"),
    words.Command: ("run", "lab", "skew"),
    words.ReplyKind: ("acknowledged", "recalled", "not-known", "off-script", "tool-call", "tool-failed", "summary"),
    words.Summary: ("keep", "drop"),
    words.FactPlace: ("user", "tool", "summary", "system", "assistant", "injected"),
    words.AppTool: ("lookup_favourite",),
    words.AppSetting: ("model", "system-message", "working-directory", "permission-handler", "memory"),
    words.SettingValue: ("first", "second", "omitted"),
}


@pytest.mark.parametrize("kind", list(STORED), ids=lambda kind: kind.__name__)
def test_every_word_keeps_the_value_stored_runs_hold(kind):
    assert tuple(member.value for member in kind) == STORED[kind]


def test_a_word_is_written_and_compared_as_its_plain_string():
    assert msgspec.json.encode({"kind": words.TurnKind.ASK}) == b'{"kind":"ask"}'
    assert f"{words.FaultPoint.AFTER_TURN}" == "after-turn"
    assert words.Action.RESUME == "resume" and "resume" in words.RESUMING_ACTIONS


def test_what_a_scenario_may_expect():
    assert words.EXPECTABLE == ("kept", "lost", "unknown", "failed-loudly", "refused", "no-provider", "undelivered")
    assert words.TELL_EXPECTABLE == ("told", "failed-loudly", "lost-silently", "unknown")
