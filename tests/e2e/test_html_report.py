"""The HTML report of a real run (the session's default matrix), opened in a real browser:
Debian's chromium, driven by Playwright, headless, with a fresh profile and no network.

Every scenario that ran has a diagram with the lanes and the arrows its record calls
for; the verdicts on the page are the stored judgement's; the fact is highlighted on
exactly the requests the witness saw it in, and crossed out on the others; at 1280 and
1920 px wide nothing runs off the page, every diagram is whole at its own size, and every
refusal's reason and every answer is there in full; the page logs no error; it prints to
A4. A screenshot of each diagram is left in the test's folder.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from handoff.chat.browser import browser_problem
from handoff.protocol import COPILOT_API_PATH, ActionDone, ActionFailed, Turn
from handoff.report.formats import rendered
from handoff.report.outcomes import judged_turns
from handoff.report.redact import for_display
from handoff.runs.record import ScenarioRecord
from handoff.words import AppTool, Verdict
from tests.e2e.chromium import launched

pytestmark = pytest.mark.e2e
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def opened(matrix, tmp_path_factory):
    """The default matrix's report, opened once: (page, console errors, the folder)."""
    folder = tmp_path_factory.mktemp("html-report")
    path = folder / "report.html"
    path.write_text(rendered(matrix.record, matrix.judgement, "html"), encoding="utf-8")
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = launched(playwright)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
            page.goto(path.as_uri())
            yield page, errors, folder
        finally:
            browser.close()


def ran(matrix) -> list[ScenarioRecord]:
    return [s for s in matrix.record.scenarios if s.steps]


def expected_lanes(scenario: ScenarioRecord) -> list[str]:
    lanes = ["coordinator"]
    stores: list[str] = []
    on_host: dict[str, str] = {}  # a host's last store: a restarted container keeps its home
    for step in scenario.steps:
        lanes += [f"worker:{step.step}", f"runtime:{step.step}"]
        store = (f"store:{step.store}" if step.store != "home" else on_host[step.host] if step.home == "restarted" else
                 "store:shared" if step.home == "shared" else f"store:{step.home}:{step.step}")
        on_host[step.host] = store
        if store not in stores:
            stores.append(store)
    return lanes + stores + ["model"]


# What each of a worker's events must appear as, on an arrow or a note of its step: the
# calls as the SDK the worker ran spells them.
LABELS = {"create": "create_session(", "create-without-id": "create_session(no id)", "resume": "resume_session(",
          "close": "disconnect()", "metadata": "get_session_metadata(", "list": "list_sessions()",
          "resume-most-recent": "list_sessions() →"}
NODE_LABELS = {"create": "createSession(", "create-without-id": "createSession(no id)", "resume": "resumeSession(",
               "close": "disconnect()", "metadata": "getSessionMetadata(", "list": "listSessions()",
               "resume-most-recent": "listSessions() →"}


def expected_labels(scenario: ScenarioRecord) -> Counter:
    wanted = Counter()
    # the coordinator starts each step's worker (or restarts its container), with the id
    for step, planned in zip(scenario.steps, scenario.scenario.steps):
        wanted[(step.step, "restart its container;" if step.home == "restarted" else "start;")] += 1
        ready = step.view().ready
        node = ready is not None and ready.sdk_language == "node"
        labels, send = (NODE_LABELS, "sendAndWait") if node else (LABELS, "send_and_wait")
        if planned.keeps == "conversation":  # the demo app's page has no id to resume: it shows what it kept
            labels = {**labels, "resume": "the page shows the"}
        for event in step.view().events:
            if isinstance(event, ActionDone) and event.action in labels:
                wanted[(step.step, labels[event.action])] += 1
            elif isinstance(event, Turn):
                wanted[(step.step, f"{send}: {event.kind}")] += 1
            elif isinstance(event, ActionFailed) and event.refused:
                wanted[(step.step, f"guard refused {event.action}")] += 1
    return wanted


def test_every_scenario_has_a_diagram_with_its_lanes_and_arrows(opened, matrix):
    page, _, _ = opened
    assert page.locator("svg.sequence").count() == len(ran(matrix))
    for scenario in ran(matrix):
        svg = page.locator(f"svg.sequence[data-scenario='{scenario.name}']")
        lanes = svg.locator("g.lane").evaluate_all("gs => gs.map(g => g.dataset.lane)")
        assert lanes == expected_lanes(scenario), scenario.name
        titles = svg.locator("g.lane text.title").all_text_contents()
        model_lane = "witness as Copilot API" if matrix.record.options.backend.path == COPILOT_API_PATH else "witness model"
        assert "coordinator" in titles and model_lane in titles
        for step in scenario.steps:
            ready = step.view().ready
            if ready is not None:  # each worker's pid and host (or container), under its name
                where = {"container": "in container", "pod": "in pod"}.get(scenario.scenario.hosts.get(step.host), "on")
                header = svg.locator(f"g.lane[data-lane='worker:{step.step}'] text").all_text_contents()
                assert f"pid {ready.pid} {where} {ready.hostname}" in " ".join(header)  # on one line or more
        drawn = svg.locator("g.message, g.note").evaluate_all(
            "gs => gs.map(g => [g.dataset.step, g.querySelector('text').textContent])")
        for (step, label), count in expected_labels(scenario).items():
            found = sum(1 for on, text in drawn if on == step and text.startswith(label))
            assert found == count, f"{scenario.name} step {step}: {count} × {label!r}, drawn {found}"


def test_the_id_travels_from_step_to_step_as_recorded(opened, matrix):
    page, _, _ = opened
    cross = next(s for s in ran(matrix) if s.name == "cross-process")
    a, b = cross.steps
    passed = page.locator("svg.sequence[data-scenario='cross-process'] g.kind-id text").all_text_contents()
    reported = a.view().reported_session_id
    assert passed == [f"start; id: {a.session_id}", f"finished; id {reported}",
                      f"start; id passed along: {reported}", f"finished; id {b.view().reported_session_id}"]


def test_the_verdicts_on_the_page_are_the_stored_judgement(opened, matrix):
    page, _, _ = opened
    for judged in matrix.judgement.scenarios:
        section = page.locator(f"section[data-scenario='{judged.name}']")
        asked = [t for t in judged.turns if t.kind == "ask"]
        shown = section.locator("details.question").evaluate_all(
            "ds => ds.map(d => [d.dataset.verdict, d.dataset.asExpected, d.querySelector('summary').textContent])")
        assert [(v, e) for v, e, _ in shown] == [(t.verdict.value, str(t.as_expected)) for t in asked], judged.name
        for (_, _, summary), turn in zip(shown, asked):
            assert turn.verdict.value in summary and " ".join(turn.reason.split()) in " ".join(summary.split())
        outcome = section.locator("p.outcome").text_content()
        assert all(t.verdict.value in outcome for t in judged.turns if t.verdict)
    for judged in matrix.judgement.scenarios:  # and the ladder says the same
        chips = page.locator(f"svg.ladder g.rung[data-scenario='{judged.name}'] g.chip").evaluate_all(
            "gs => gs.map(g => g.dataset.verdict)")
        assert chips == [t.verdict.value for t in judged_turns(judged)]  # a tell lost silently has one too


def test_the_fact_is_highlighted_exactly_where_the_witness_saw_it(opened, matrix):
    page, _, _ = opened
    fact = matrix.record.options.fact
    for scenario in ran(matrix):
        svg = page.locator(f"svg.sequence[data-scenario='{scenario.name}']")
        drawn = Counter(map(tuple, svg.locator("g[data-fact]").evaluate_all(
            "gs => gs.map(g => [g.dataset.step, g.dataset.fact])")))
        seen = Counter((e.step, "seen" if e.fact_sent else "absent") for e in scenario.evidence
                       if e.fact_sent is not None)
        assert drawn == seen, scenario.name
    seen = page.locator("svg.sequence tspan.fact.seen")
    absent = page.locator("svg.sequence tspan.fact.absent")
    assert seen.count() > 0 and absent.count() > 0
    assert set(seen.all_text_contents()) == set(absent.all_text_contents()) == {f"'{fact}'"}
    style = "t => { const s = getComputedStyle(t); return [s.fontWeight, s.stroke, s.textDecorationLine]; }"
    weight, stroke, _ = seen.first.evaluate(style)
    assert int(weight) >= 700 and stroke not in ("none", "rgb(255, 255, 255)")  # bold, on a highlighter stroke
    assert "line-through" in absent.first.evaluate(style)[2]
    # In the evidence: the statement is marked in what the model was sent, and only there.
    assert page.locator("div.request[data-fact-sent='False'] mark").count() == 0
    sent = page.locator("div.request[data-fact-sent='True']")
    assert sent.count() > 0
    for index in range(sent.count()):
        assert sent.nth(index).locator("mark.fact-seen").count() >= 1


def test_the_page_logs_no_error_and_prints_on_a4(opened, matrix):
    page, errors, folder = opened
    assert errors == []
    pdf = page.pdf(path=str(folder / "report.pdf"), format="A4", print_background=True)
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert pages >= len(matrix.record.scenarios)  # each scenario starts a page of its own


MEASURED = """() => {
  const inside = (box, room) => box.left >= room.left - 0.5 && box.right <= room.right + 0.5 &&
                                box.top >= room.top - 0.5 && box.bottom <= room.bottom + 0.5;
  const drawn = e => { const b = e.getBoundingClientRect(); return b.width > 0 || b.height > 0; };
  return {
    page: document.documentElement.scrollWidth,
    wider: [...document.body.querySelectorAll('*')].filter(drawn)
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map(e => e.tagName + ' ' + (e.id || e.getAttribute('class') || '')),
    pictures: [...document.querySelectorAll('svg.sequence, svg.ladder')].map(svg => {
      const box = svg.getBoundingClientRect(), room = svg.parentElement.getBoundingClientRect();
      const cut = [...svg.querySelectorAll('g rect, g text, g line')].filter(drawn)
        .filter(e => !inside(e.getBoundingClientRect(), box)).map(e => e.textContent || e.tagName);
      return {name: svg.dataset.scenario || 'the ladder', width: box.width, room: room.width, left: box.left,
              roomLeft: room.left, scrolls: svg.parentElement.scrollWidth > svg.parentElement.clientWidth,
              own: svg.viewBox.baseVal.width, cut: cut};
    }),
  };
}"""


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_every_diagram_fits_the_page_whole_and_at_its_own_size(opened, matrix, width, height):
    """Nothing runs off the right of the window; each diagram (and the ladder) is within its
    column without a scroll bar of its own, drawn at its own size (its text not shrunk), and
    nothing in it is outside it."""
    page, _, _ = opened
    page.set_viewport_size({"width": width, "height": height})
    measured = page.evaluate(MEASURED)
    assert measured["page"] <= width and measured["wider"] == []
    assert len(measured["pictures"]) == len(ran(matrix)) + 1
    for picture in measured["pictures"]:
        name = picture["name"]
        assert picture["width"] <= picture["room"] + 0.5 and picture["left"] >= picture["roomLeft"] - 0.5, name
        assert not picture["scrolls"], name
        assert abs(picture["width"] - picture["own"]) < 1, name  # at its own size: not scaled down to fit
        assert picture["cut"] == [], name


def test_no_refusal_reason_or_answer_is_cut_short(opened, matrix):
    """Each refused turn's whole reason is in its diagram's text, as is each answer; no
    label is cut with "…" (an id that carries a secret reads "cust…(redacted…)": that is
    not a cut)."""
    page, _, _ = opened
    shown, _ = for_display(matrix.record, matrix.judgement)  # an id that carries a secret shows redacted
    refusals = 0
    for scenario in (s for s in shown.scenarios if s.steps):
        svg = page.locator(f"svg.sequence[data-scenario='{scenario.name}']")
        said = svg.locator("g.message > text, g.note > text").all_text_contents()
        notes = svg.locator("g.note.kind-refusal > text").all_text_contents()
        answers = svg.locator("g.message.kind-answer > text").all_text_contents()
        for step in scenario.steps:
            for event in step.view().events:
                if isinstance(event, ActionFailed) and event.refused:
                    reason = " ".join(event.message.split())
                    assert f"guard refused {event.action}: {reason}" in notes, (scenario.name, reason)
                    refusals += 1
                elif isinstance(event, Turn) and event.answer is not None:
                    assert f"“{' '.join(event.answer.split())}”" in answers, (scenario.name, event.answer)
        assert not [text for text in said if text.replace("…(redacted", "").count("…")], scenario.name
    assert refusals > 0
    for judged in matrix.judgement.scenarios:  # and each refused question's step shows its refusal
        for turn in judged_turns(judged):
            if turn.verdict == Verdict.REFUSED and turn.step is not None:
                assert page.locator(f"svg.sequence[data-scenario='{judged.name}'] "
                                    f"g.note.kind-refusal[data-step='{turn.step.step}']").count() >= 1, judged.name


def test_a_screenshot_of_each_diagram(opened, matrix):
    page, _, folder = opened
    page.add_style_tag(content=".diagram, .picture { overflow: visible; } body { max-width: none; }")
    page.locator("header").screenshot(path=str(folder / "header.png"))
    page.locator("#ladder").screenshot(path=str(folder / "ladder.png"))
    for scenario in ran(matrix):  # JPEG: a wide diagram's PNG takes seconds to encode
        shot: Path = folder / f"diagram-{scenario.name}.jpeg"
        # A bound for a hung page, not a pace: on a loaded machine one diagram's shot once took
        # more than Playwright's default 30 s.
        page.locator(f"svg.sequence[data-scenario='{scenario.name}']").screenshot(path=str(shot), quality=85,
                                                                                  timeout=120_000)
        assert shot.stat().st_size > 5_000


@pytest.mark.parametrize("width, height", [(1280, 800), (1920, 1080)])
def test_what_was_proved_is_on_the_first_screen(opened, matrix, width, height):
    page, _, _ = opened
    page.set_viewport_size({"width": width, "height": height})
    page.evaluate("window.scrollTo(0, 0)")
    block = page.locator("#proved")
    box = block.bounding_box()
    assert box is not None and box["y"] + box["height"] <= height, box
    rows = block.locator("tr th").all_text_contents()
    assert rows == ["same process", "new process", "new machine", "new container", "database store",
                    "compatible runtime", "authorization", *([] if browser_problem() else ["web app"]), "faults"]
    assert "every rung came out as its file says" in block.locator("h2").text_content()


def test_tool_calls_compaction_and_memory_are_drawn_where_they_happened(opened, matrix):
    """The agent rungs' diagrams (docs/agents.md), in the order the record has them: the
    model's tool call, the app's tool running and its result (marked with the fact it
    carries), the runtime answering a call of a tool the session lacks, a compaction's
    request and summary, and memory where a step turned it on."""
    page, _, _ = opened

    def drawn(name: str, step: str) -> list[tuple[str, str]]:
        """A step's arrows and notes, top to bottom (the page draws every arrow before the notes)."""
        found = page.locator(f"svg.sequence[data-scenario='{name}'] :is(g.message, g.note)").evaluate_all(
            "gs => gs.map(g => [g.dataset.step, g.dataset.carries || '', g.querySelector('text').textContent, "
            "parseFloat(g.querySelector('text').getAttribute('y'))])")
        return [(carries, text) for on, carries, text, _ in sorted(found, key=lambda f: f[3]) if on == step]

    def after(shown: list[tuple[str, str]], *prefixes: str) -> list[str]:
        """The carries-marks of the first run of messages that start with ``prefixes``, in order."""
        texts = [text for _, text in shown]
        start = next(i for i, text in enumerate(texts) if text.startswith(prefixes[0]))
        assert all(texts[start + n].startswith(p) for n, p in enumerate(prefixes)), texts[start:start + len(prefixes)]
        return [carries for carries, _ in shown[start:start + len(prefixes)]]

    lookup = AppTool.LOOKUP_FAVOURITE
    assert after(drawn("tool-fact-resumed-with-tool", "A"), "request:", f"tool call: {lookup}",
                 f"runs the app's tool {lookup}", "tool result:", "request:") == ["", "", "", "seen", ""]
    missing = after(drawn("tool-fact-resumed-without-tool", "B"), f"tool call: {lookup}", f"no tool {lookup} here")
    assert missing == ["", "absent"]  # the runtime's "does not exist" carries no fact
    for name, kept in (("compaction-tool-fact-kept", "seen"), ("compaction-tool-fact-dropped", "absent")):
        assert after(drawn(name, "A"), "history.compact()", "compaction request:", "summary:",
                     "compacted:") == ["", "", kept, ""], name
    for step, where in (("A", "in the system prompt"), ("B", "in the system prompt"), ("C", "in user messages")):
        assert any(text == f"memory on: memories {where}" for _, text in drawn("memory-new-session-offline", step))
