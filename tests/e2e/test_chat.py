"""`handoff chat`, driven as a person would: a real chromium through Playwright, the real
runtime behind the server, the witness as the Copilot API. The page keeps the session id
and nothing else; the conversation comes back from the server's store; another user's id
is refused before the model hears of it."""

from __future__ import annotations

import re
import secrets
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from handoff.eventlog import events_path, messages, parse_events, summarize
from handoff.fact import Fact
from handoff.guard.ids import MINTED
from handoff.worker.store import HomeStore
from handoff.witness.evidence import read_evidence
from tests.e2e.chromium import launched

pytestmark = pytest.mark.e2e
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[test]')")

KEPT = "handoff-chat.session"  # the page's one localStorage key
DEMO_KEPT = "handoff-chat.conversation"  # the demo app's page's (/demo): the whole conversation
START_SECONDS = 60  # bounds for a hung server, not a pace
STOP_SECONDS = 30
TURN_MS = 60_000
HELD_SECONDS = 3600  # a lease another server keeps renewing: live for the whole test, whatever its pace
USER_LINE = re.compile(r"user (?P<user>\w+), password (?P<password>\S+)")


@dataclass
class Chat:
    url: str
    passwords: dict[str, str]
    store: Path | str
    process: subprocess.Popen
    descendants: list[psutil.Process]

    @property
    def evidence(self) -> Path:
        return Path(self.store) / "witness-evidence.jsonl"


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "handoff", "chat", *args]


def start_chat(store: Path | str, *args: str) -> Chat:
    process = subprocess.Popen(_command("--port", "0", "--store", str(store), *args), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    passwords, url = {}, None
    try:
        for line in iter(process.stdout.readline, ""):
            if found := USER_LINE.search(line):
                passwords[found["user"]] = found["password"]
            if line.startswith("Listening: "):
                url = line.removeprefix("Listening: ").strip()
                break
    finally:
        if url is None:
            process.kill()
            pytest.fail(f"handoff chat did not start: {process.communicate(timeout=STOP_SECONDS)}")
    return Chat(url, passwords, store, process, psutil.Process(process.pid).children(recursive=True))


def stop_chat(chat: Chat) -> int:
    chat.process.send_signal(signal.SIGINT)
    code = chat.process.wait(timeout=STOP_SECONDS)
    chat.process.stdout.close()
    chat.process.stderr.close()
    return code


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    chat = start_chat(tmp_path_factory.mktemp("chat") / "store")
    try:
        yield chat
    finally:
        code = stop_chat(chat)
        left = [p for p in chat.descendants if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert code == 0 and not left, (code, left)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = launched(playwright)
        try:
            yield browser
        finally:
            browser.close()


def logged_in(browser, chat: Chat, user: str, path: str = "/"):
    """A new browser context (an empty localStorage: another device) logged in as ``user``."""
    page = browser.new_context().new_page()
    page.goto(chat.url + path)
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", chat.passwords[user])
    page.click("#login button[type=submit]")
    page.wait_for_selector("#chat:not([hidden])")
    assert page.locator("#login").is_hidden()  # a person logged in sees no login form
    return page


def settled(page) -> str:
    """The session the page shows, once it has shown it (its conversation read back, or
    the refusal): what is on the page before then is not the session's yet."""
    shown = page.evaluate(f"() => localStorage.getItem('{KEPT}')")
    page.wait_for_selector(f"#current[data-shown='{shown}']")
    return shown


def new_chat(page) -> str:
    """Click "New chat" and wait until the page shows the new session: its id."""
    before = page.evaluate(f"() => localStorage.getItem('{KEPT}')")
    page.click("#new")
    page.wait_for_function(f"(before) => localStorage.getItem('{KEPT}') !== before", arg=before)
    return settled(page)


def say(page, text: str) -> None:
    """Send ``text`` and wait until the page has re-read the conversation with its answer."""
    settled(page)
    before = page.locator(".assistant").count()
    page.fill("#send input[name=text]", text)
    page.click("#send button[type=submit]")
    sync_api.expect(page.locator(".assistant")).to_have_count(before + 1, timeout=TURN_MS)


def kept(page) -> dict[str, str]:
    return page.evaluate("() => Object.fromEntries(Object.entries(localStorage))")


def told(browser, chat: Chat, fact: Fact) -> str:
    """Alice, on a device of her own, tells ``fact`` in a new chat: its id (the page is closed)."""
    page = logged_in(browser, chat, "alice")
    new_chat(page)
    say(page, fact.remember_prompt)
    session_id = kept(page)[KEPT]
    page.context.close()
    return session_id


def a_fact() -> Fact:
    return Fact(f"Loyal {secrets.token_hex(3)}", "retail segment")  # never one the witness knows


def test_the_browser_keeps_only_the_session_id_and_the_conversation_comes_from_the_server(browser, chat):
    fact = a_fact()
    page = logged_in(browser, chat, "alice")
    new_chat(page)
    say(page, fact.remember_prompt)

    page.reload()  # what the page shows now it read from the server, by the id alone
    sync_api.expect(page.locator(".user").first).to_have_text(fact.remember_prompt)
    say(page, fact.question_prompt)
    assert fact.is_in(page.locator(".assistant").last.inner_text())

    stored = kept(page)
    assert list(stored) == [KEPT] and MINTED.fullmatch(stored[KEPT]), stored
    assert page.evaluate("() => sessionStorage.length") == 0
    for value in [*stored.values(), *(c["value"] for c in page.context.cookies())]:
        assert fact.value not in value and fact.topic not in value
    assert [c["httpOnly"] for c in page.context.cookies()] == [True]  # the login, out of the page's reach


def test_another_device_of_the_same_user_picks_the_session_from_the_list(browser, chat):
    fact = a_fact()
    session_id = told(browser, chat, fact)

    second = logged_in(browser, chat, "alice")  # nothing kept: the list is the server's
    second.click(f"#sessions button[data-id='{session_id}']")
    assert settled(second) == session_id
    say(second, fact.question_prompt)
    assert fact.is_in(second.locator(".assistant").last.inner_text())
    assert kept(second) == {KEPT: session_id}


def test_another_user_with_the_id_is_refused_and_the_model_hears_nothing_of_it(browser, chat):
    fact = a_fact()
    session_id = told(browser, chat, fact)

    bob = logged_in(browser, chat, "bob", path=f"/?session={session_id}")  # the id in the URL, then kept
    sync_api.expect(bob.locator("#notice")).to_contain_text("access denied")
    bob.fill("#send input[name=text]", fact.question_prompt)
    bob.click("#send button[type=submit]")
    sync_api.expect(bob.locator("#notice")).to_contain_text("access denied")
    assert bob.locator(".assistant").count() == 0
    assert session_id not in bob.locator("#sessions").inner_html()
    assert not fact.is_in(bob.content())
    heard = read_evidence(chat.evidence)
    assert any(request.principal == "alice" and request.session_id == session_id for request in heard)
    assert not [request for request in heard if request.principal == "bob"]


def test_the_demo_app_s_page_keeps_the_whole_conversation_in_the_browser_and_no_id(browser, chat):
    fact = a_fact()
    page = logged_in(browser, chat, "alice", path="/demo")
    page.click("#new")
    page.wait_for_selector("#messages[data-shown='0']", state="attached")
    page.fill("#send input[name=text]", fact.remember_prompt)
    page.click("#send button[type=submit]")
    sync_api.expect(page.locator(".assistant")).to_have_count(1, timeout=TURN_MS)

    stored = kept(page)
    assert list(stored) == [DEMO_KEPT] and fact.value in stored[DEMO_KEPT], stored
    assert not MINTED.search(stored[DEMO_KEPT])  # no id: the server knows the session only in its memory
    page.reload()  # shown from the browser's own copy
    page.wait_for_selector("#messages[data-shown='2']", state="attached")
    sync_api.expect(page.locator(".user").first).to_have_text(fact.remember_prompt)

    other = logged_in(browser, chat, "alice", path="/demo")  # another device: its browser kept nothing
    other.wait_for_selector("#messages[data-shown='0']", state="attached")
    assert kept(other) == {} and not fact.is_in(other.content())


def _log(chat: Chat, session_id: str) -> bytes:
    return events_path(Path(chat.store) / "home", session_id).read_bytes()


def test_two_devices_of_one_user_sending_at_once_take_turns_and_never_fork_the_log(browser, chat):
    fact = a_fact()
    session_id = told(browser, chat, fact)
    laptop, phone = (logged_in(browser, chat, "alice", path=f"/?session={session_id}") for _ in range(2))
    for page in (laptop, phone):
        settled(page)
        page.fill("#send input[name=text]", fact.question_prompt)
    for page in (laptop, phone):  # both sent before either is answered, as far as either page knows
        page.click("#send button[type=submit]")
    for page in (laptop, phone):  # each waited its turn on the server: answered, neither refused
        page.wait_for_function("() => document.querySelectorAll('.assistant').length >= 2"
                               " || document.getElementById('notice').textContent !== ''", timeout=TURN_MS)
        assert page.locator("#notice").text_content() == ""

    events, unreadable = parse_events(_log(chat, session_id))
    assert summarize(events, unreadable).branch_points == 0 and not unreadable
    said = messages(events)
    assert [role for role, _ in said] == ["user", "assistant"] * 3
    assert all(fact.is_in(text) for _, text in said[3::2])  # both questions answered with the fact


def test_a_session_another_server_is_writing_is_told_busy_and_its_log_left_alone(browser, chat):
    fact = a_fact()
    session_id = told(browser, chat, fact)
    registry = HomeStore(Path(chat.store) / "home", f"sqlite:///{Path(chat.store) / 'registry.db'}").registry
    other = "another-server:alice"  # a second server of the same store, in the middle of her turn
    assert registry.take_lease(session_id, other, HELD_SECONDS)
    page = logged_in(browser, chat, "alice", path=f"/?session={session_id}")
    settled(page)
    before = _log(chat, session_id)
    page.fill("#send input[name=text]", fact.question_prompt)
    page.click("#send button[type=submit]")
    sync_api.expect(page.locator("#notice")).to_contain_text("another writer holds this session's lease")
    assert page.locator("#notice").get_attribute("data-status") == "409"
    assert _log(chat, session_id) == before

    registry.release_lease(session_id, other)  # that server's turn is over
    say(page, fact.question_prompt)
    assert fact.is_in(page.locator(".assistant").last.inner_text())


def _refused(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(_command(*args), capture_output=True, text=True, timeout=START_SECONDS)


def test_a_port_in_use_is_one_line_and_exit_2_before_anything_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _refused("--port", str(port), "--store", str(tmp_path / "store"))
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and f"--port {port}" in done.stderr, done.stderr
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("kind", ["a file", "a folder of other files"])
def test_a_store_that_is_not_a_chat_s_is_one_line_and_exit_2(tmp_path, kind):
    store = tmp_path / "store"
    if kind == "a file":
        store.write_text("mine\n")
    else:
        store.mkdir()
        (store / "notes.txt").write_text("mine\n")
    done = _refused("--port", "0", "--store", str(store))
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and "--store" in done.stderr, done.stderr
    assert sorted(p.name for p in store.iterdir()) == ["notes.txt"] if store.is_dir() else store.read_text() == "mine\n"


def test_two_servers_share_a_postgresql_store_and_the_second_goes_on_when_the_first_is_killed(browser, postgres_url,
                                                                                           tmp_path):
    """The lab's promise for a real deployment: the conversation lives in the shared store,
    not in a server. Each server has a runtime and a folder of its own; the database holds
    the session files (through SessionFs), the registry and the app's key, so the second
    server knows alice's password and her session, and still refuses bob."""
    fact = a_fact()
    first = start_chat(postgres_url, "--evidence", str(tmp_path / "first.jsonl"))
    second = start_chat(postgres_url, "--evidence", str(tmp_path / "second.jsonl"))
    try:
        assert first.passwords == second.passwords  # one key, in the database
        session_id = told(browser, first, fact)
        first.process.kill()  # SIGKILL, between turns
        first.process.wait(timeout=STOP_SECONDS)

        other_device = logged_in(browser, second, "alice")
        other_device.click(f"#sessions button[data-id='{session_id}']")
        assert settled(other_device) == session_id
        say(other_device, fact.question_prompt)
        assert fact.is_in(other_device.locator(".assistant").last.inner_text())
        bob = logged_in(browser, second, "bob", path=f"/?session={session_id}")
        sync_api.expect(bob.locator("#notice")).to_contain_text("access denied")
    finally:
        for chat in (first, second):
            if chat.process.poll() is None:
                stop_chat(chat)
    heard = read_evidence(tmp_path / "second.jsonl")
    assert [(r.principal, r.session_id) for r in heard] == [("alice", session_id)]  # the ask, and nothing of bob's
    left = [p for chat in (first, second) for p in chat.descendants if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, left


def test_a_database_that_does_not_answer_is_one_line_and_exit_2(tmp_path):
    with socket.socket() as nobody:  # a port nothing listens on once this is closed
        nobody.bind(("127.0.0.1", 0))
        port = nobody.getsockname()[1]
    done = _refused("--port", "0", "--store", f"postgresql://chat:secret@127.0.0.1:{port}/chat")
    assert done.returncode == 2, done
    assert done.stderr.count("\n") == 1 and "cannot connect" in done.stderr and "secret" not in done.stderr
