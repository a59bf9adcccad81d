"""The pictures in docs/chat.md (docs/chat.png, docs/chat-refused.png), made by driving a
real `handoff chat` in Debian's chromium through Playwright, as its e2e tests do:

    .venv/bin/python tools/chat_screenshots.py [--out docs]

docs/chat.png is alice's page after she told the fact, reloaded, and asked; the panel on
the left is her own list. docs/chat-refused.png is bob's page opened on alice's session id
from a link: refused. The chat's store is a temporary folder, gone afterwards."""

from __future__ import annotations

import argparse
import re
import shutil
import signal
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
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen([sys.executable, "-m", "handoff", "chat", "--port", "0", "--store", f"{folder}/store"],
                                  stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            said = ""
            for line in iter(server.stdout.readline, ""):
                said += line
                if line.startswith("Listening: "):
                    break
            url = said.rsplit("Listening: ", 1)[-1].strip()
            passwords = dict(re.findall(r"user (\w+), password (\S+)", said))
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium, args=["--headless", *QUIET])
                try:
                    alice = _logged_in(browser, url, "alice", passwords["alice"])
                    alice.click("#new")
                    alice.wait_for_function(f"() => localStorage.getItem('{KEPT}') !== null")
                    _say(alice, fact.remember_prompt)
                    alice.reload()
                    _say(alice, fact.question_prompt)
                    options.out.mkdir(parents=True, exist_ok=True)
                    alice.screenshot(path=str(options.out / "chat.png"))
                    session_id = alice.evaluate(f"() => localStorage.getItem('{KEPT}')")
                    bob = _logged_in(browser, url, "bob", passwords["bob"], f"/?session={session_id}")
                    bob.wait_for_selector(f"#current[data-shown='{session_id}']")
                    bob.screenshot(path=str(options.out / "chat-refused.png"))
                finally:
                    browser.close()
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=30)
    print(f"{options.out / 'chat.png'}, {options.out / 'chat-refused.png'}")
    return 0


def _logged_in(browser, url: str, user: str, password: str, path: str = "/"):
    page = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1).new_page()
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


if __name__ == "__main__":
    sys.exit(main())
