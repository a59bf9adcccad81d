"""The pictures in docs/chat.md (docs/chat.png, docs/chat-refused.png, docs/chat-demo.png),
made by driving a real `handoff chat` in Debian's chromium through Playwright, as its e2e
tests do:

    .venv/bin/python tools/chat_screenshots.py [--out docs]

docs/chat.png is alice's page after she told the fact, reloaded, and asked; the panel on
the left is her own list. docs/chat-refused.png is bob's page opened on alice's session id
from a link: refused. docs/chat-demo.png is the demo app's page (/demo) in alice's same
browser after its server was stopped and another started at the same address on a new
store: the conversation the browser kept, and the answer of a model never sent it. The
chats' stores are temporary folders, gone afterwards."""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from handoff.chat.browser import QUIET  # noqa: E402
from handoff.fact import DEFAULT_TOPIC, DEFAULT_VALUE, Fact  # noqa: E402

WIDTH, HEIGHT = 1000, 560
TURN_MS = 60_000
KEPT = "handoff-chat.session"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    options = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("no chromium here (tools/ensure-system-packages installs Debian's, as root)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    fact = Fact(DEFAULT_VALUE, DEFAULT_TOPIC)
    options.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--headless", *QUIET])
        try:
            with _served(Path(folder) / "store", 0) as (url, passwords):
                alice = _logged_in(browser.new_context(**PICTURE), url, "alice", passwords["alice"])
                alice.click("#new")
                alice.wait_for_function(f"() => localStorage.getItem('{KEPT}') !== null")
                _say(alice, fact.remember_prompt)
                alice.reload()
                _say(alice, fact.question_prompt)
                alice.screenshot(path=str(options.out / "chat.png"))
                session_id = alice.evaluate(f"() => localStorage.getItem('{KEPT}')")
                bob = _logged_in(browser.new_context(**PICTURE), url, "bob", passwords["bob"], f"/?session={session_id}")
                bob.wait_for_selector(f"#current[data-shown='{session_id}']")
                bob.screenshot(path=str(options.out / "chat-refused.png"))
            port = _free_port()  # both servers of the demo at one address: one origin, one localStorage
            device = browser.new_context(**PICTURE)
            with _served(Path(folder) / "first", port) as (url, passwords):
                demo = _logged_in(device, url, "alice", passwords["alice"], "/demo")
                _say_in_demo(demo, fact.remember_prompt)
            with _served(Path(folder) / "restarted", port) as (url, passwords):
                demo = _logged_in(device, url, "alice", passwords["alice"], "/demo")  # the new store's key: log in again
                _say_in_demo(demo, fact.question_prompt)
                demo.screenshot(path=str(options.out / "chat-demo.png"))
        finally:
            browser.close()
    print(", ".join(str(options.out / name) for name in ("chat.png", "chat-refused.png", "chat-demo.png")))
    return 0


PICTURE = dict(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)


@contextlib.contextmanager
def _served(store: Path, port: int):
    """A `handoff chat` on ``store`` at ``port`` (0: any): its URL and its users' passwords."""
    server = subprocess.Popen([sys.executable, "-m", "handoff", "chat", "--port", str(port), "--store", str(store)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        said = ""
        for line in iter(server.stdout.readline, ""):
            said += line
            if line.startswith("Listening: "):
                break
        yield said.rsplit("Listening: ", 1)[-1].strip(), dict(re.findall(r"user (\w+), password (\S+)", said))
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _logged_in(context, url: str, user: str, password: str, path: str = "/"):
    page = context.new_page()
    page.goto(url + path)
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", password)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#chat:not([hidden])")
    return page


def _say(page, text: str) -> None:
    shown = page.evaluate(f"() => localStorage.getItem('{KEPT}')")
    page.wait_for_selector(f"#current[data-shown='{shown}']")
    before = page.locator(".assistant").count()
    page.fill("#send input[name=text]", text)
    page.click("#send button[type=submit]")
    page.wait_for_function("(before) => document.querySelectorAll('.assistant').length > before", arg=before,
                           timeout=TURN_MS)
    page.wait_for_selector(f"#current[data-shown='{shown}']")


def _say_in_demo(page, text: str) -> None:
    page.wait_for_selector("#messages[data-shown]", state="attached")
    before = page.locator(".assistant").count()
    page.fill("#send input[name=text]", text)
    page.click("#send button[type=submit]")
    page.wait_for_function("(before) => document.querySelectorAll('.assistant').length > before", arg=before,
                           timeout=TURN_MS)


if __name__ == "__main__":
    sys.exit(main())
