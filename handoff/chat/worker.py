"""``python -m handoff.chat.worker``: a step done as a person does it in `handoff chat`'s page.

The worker is the chat server and its user at once: it serves the chat (the step's
runtime, its store and its guard, as `handoff chat` does) on a port of its own, and
drives a headless chromium through Playwright against it, in the profile of the step's
``device``. So the step's actions reach the SDK the way the lab's demo app would have
them reach it: the page keeps only the session id, and the server resumes the session by
that id behind the guard on every turn. It reports the same events as the SDK's worker
(handoff/protocol.py), and is judged like every other step.

What each action is in the page:

* ``create``: log in if the profile is not, then "New chat" (an id minted for the user);
* ``tell`` / ``ask``: type the prompt, send, and read the answer the page shows once it
  has read the conversation back from the server;
* ``close``: nothing to click: the server closed the session after its last turn;
* ``resume``: the session passed along, as a person gets back to it: the page reloaded
  when it shows it already (or the device kept its id), else picked from the list, else
  opened from a link (``?session=ID``), as someone who was handed the id would.

A page that says "refused" (the guard's 403 or 409) is a refusal, as the guard's are in
the SDK's worker.

A step whose ``keeps`` is "conversation" is done in the lab's demo app as it was instead
(``/demo``, handoff/chat/demo.py): the browser keeps the conversation, the server the
session only in its memory. There ``create`` is "New chat", ``resume`` is the page opened
again (it shows what the browser kept; there is nothing to pick), and a turn is in the
session the server remembers for the user, or a new one it starts when it remembers none.
"""

from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Any

from handoff.chat.accounts import Accounts
from handoff.chat.browser import QUIET, chromium
from handoff.chat.conversations import Conversations
from handoff.chat.web import make_app, web_server
from handoff.guard.gate import Refused
from handoff.protocol import Hold, Turn, WorkerSpec
from handoff.witness.tags import TAG_HEADERS
from handoff.worker.__main__ import run_and_exit
from handoff.worker.interpreter import Emit, Interpreter
from handoff.worker.sessions import GuardedSessions
from handoff.words import BrowserKeeps, FaultPoint, TurnKind

KEPT = "handoff-chat.session"  # the page's one localStorage key (handoff/chat/templates/page.html)
ORIGIN = "chat.handoff.test"  # the app's address in every device's browser, whichever server serves it
DEVICES = ".handoff-devices"  # in the step's home, unless its host keeps browsers elsewhere: a profile per device
PAGE_MS = 30_000  # a page that does not load within this is a failure of the step
REFUSALS = ("403", "409")  # the guard's answers, as the page shows them in #notice[data-status]


class BrowserInterpreter(Interpreter):
    PAGE = "/"  # the page the step is done in

    def __init__(self, spec: WorkerSpec, emit: Emit):
        super().__init__(spec, emit)
        if not isinstance(self.sessions, GuardedSessions) or not spec.device:
            raise LookupError("a step in the chat's page needs a device and guarded = true")
        self.next_tags: dict[str, str] = {}
        self.url = ""
        self.page: Any = None
        self._context: Any = None

    async def run(self) -> bool:
        async with self._served(), self._browser():
            return await super().run()

    # -- the server and the browser ------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _served(self):
        import asyncio

        user = self.spec.owner
        conversations = Conversations(self.store, {user: (self.runtime, self.sessions)}, self.backend.model,
                                      turn_headers=lambda: dict(self.next_tags), turn_timeout=self.spec.turn_timeout)
        accounts = Accounts(bytes.fromhex(self.spec.app_key), (user,))
        self.password = accounts.password(user)
        listener = socket.create_server(("127.0.0.1", 0))
        app = make_app(accounts, conversations)
        self.demo = app.state.demo
        server = web_server(app)
        serving = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
        self.served_at = f"127.0.0.1:{listener.getsockname()[1]}"
        self.url = f"http://{ORIGIN}"
        try:
            yield
        finally:
            server.should_exit = True
            with contextlib.suppress(Exception):
                await serving
            listener.close()

    @contextlib.asynccontextmanager
    async def _browser(self):
        from playwright.async_api import async_playwright

        devices = Path(self.spec.devices) if self.spec.devices else Path(self.spec.home).expanduser() / DEVICES
        profile = devices / self.spec.device
        profile.mkdir(parents=True, exist_ok=True)
        async with async_playwright() as playwright:
            # Every server of the scenario is the app at one address, as a deployed app is:
            # a browser keeps what it keeps (localStorage, the login) by that origin.
            self._context = await playwright.chromium.launch_persistent_context(
                str(profile), executable_path=chromium(), headless=True,
                args=[*QUIET, f"--host-resolver-rules=MAP {ORIGIN} {self.served_at}"])
            try:
                yield
            finally:
                await self._context.close()

    async def _open(self, path: str | None = None) -> Any:
        """The page at ``path``, logged in as the step's principal (a device that logged in
        before still is: the login is a cookie the profile keeps)."""
        if self.page is None:
            self.page = self._context.pages[0] if self._context.pages else await self._context.new_page()
            self.page.set_default_timeout(PAGE_MS)
        await self.page.goto(self.url + (path or self.PAGE))
        await self.page.wait_for_selector("#chat:not([hidden]), #login:not([hidden])")
        if await self.page.locator("#login:not([hidden])").count():
            await self.page.fill("input[name=user]", self.spec.owner)
            await self.page.fill("input[name=password]", self.password)
            await self.page.click("#login button[type=submit]")
            await self.page.wait_for_selector("#chat:not([hidden])")
        return self.page

    async def _shown(self, session_id: str) -> None:
        """Wait until the page shows ``session_id``'s conversation, or its refusal (raised)."""
        await self.page.wait_for_selector(f"#current[data-shown='{session_id}']")
        await self._refused()

    async def _refused(self) -> None:
        notice = self.page.locator("#notice")
        said = (await notice.text_content() or "").strip()
        if not said:
            return
        status = await notice.get_attribute("data-status")
        if status in REFUSALS:
            raise Refused(said.removeprefix("refused: "))
        raise RuntimeError(f"the page says: {said}")

    # -- the actions -----------------------------------------------------------------------

    async def _create(self) -> None:
        page = await self._open()
        before = await page.evaluate(f"() => localStorage.getItem('{KEPT}')")
        await page.click("#new")
        await page.wait_for_function(f"([kept, before]) => localStorage.getItem(kept) !== before", arg=[KEPT, before])
        self.session_id = await page.evaluate(f"() => localStorage.getItem('{KEPT}')")
        await self._shown(self.session_id)
        self.session = self.session_id  # open, as far as the page goes: the server opens it per turn

    async def _resume(self) -> dict:
        wanted = self.session_id
        if not wanted:
            raise LookupError("no session id was passed along to resume")
        page = await self._open()  # the device's page as it opens: reloaded when it was open
        if await page.evaluate(f"() => localStorage.getItem('{KEPT}')") != wanted:
            listed = page.locator(f"#sessions button[data-id='{wanted}']")
            if await listed.count():
                await listed.click()
            else:
                await self._open(f"/?session={wanted}")  # a link with the id, all a stranger can have
        await self._shown(wanted)
        self.session = wanted
        return {"shown": await page.locator(".message").count()}

    async def _close(self) -> None:
        self.session = None

    async def _turn(self, kind: TurnKind, prompt: str, session: Any = None) -> None:
        started = time.monotonic()
        self.turns += 1
        self.next_tags = {TAG_HEADERS["turn"]: str(self.turns)} if self.backend.seen_on_the_wire else {}
        page = self.page
        answers = await page.locator(".assistant").count()
        await page.fill("#send input[name=text]", prompt)
        await page.click("#send button[type=submit]")
        await page.wait_for_function(
            "(answers) => document.querySelectorAll('.assistant').length > answers"
            " || document.getElementById('notice').textContent !== ''",
            arg=answers, timeout=(self.spec.turn_timeout + PAGE_MS / 1000) * 1000)
        await self._refused()
        answer = await page.locator(".assistant").last.text_content()
        self.session_id = self._answered_in()
        self.emit(Turn(t=time.time(), turn=self.turns, kind=kind, session_id=self.session_id, prompt=prompt,
                       answer=answer, ms=round((time.monotonic() - started) * 1000)))
        if Hold(FaultPoint.AFTER_TURN, self.turns) in self.spec.holds:  # where the server is killed between turns
            await self.holds.wait(FaultPoint.AFTER_TURN, self.turns, self.session_id)

    def _answered_in(self) -> str | None:
        """The session the turn just taken was in."""
        return self.session_id


class DemoPageInterpreter(BrowserInterpreter):
    """A step in the lab's demo app as it was (keeps = "conversation")."""

    PAGE = "/demo"

    async def _create(self) -> None:
        page = await self._open()
        await page.click("#new")
        # shown again (empty: no size to be visible) once the server has started the new chat
        await page.wait_for_selector("#messages[data-shown='0']", state="attached")
        self.session_id = self._answered_in()
        self.session = self.session_id

    async def _resume(self) -> dict:
        """The page opened again: what the browser kept is shown, with no id to go by, so
        the step goes on in whatever session the server remembers (or a new one)."""
        page = await self._open()
        shown = page.locator("#messages[data-shown]")
        await shown.wait_for(state="attached")
        self.session_id = self._answered_in()
        self.session = page  # what is open: the page; the server opens a session per turn
        return {"shown": int(await shown.get_attribute("data-shown"))}

    def _answered_in(self) -> str | None:
        # The worker is the server too: the session it remembers for the user, as a new
        # server remembers none until the next message starts one.
        return self.demo.current.get(self.spec.owner)


# What the browser keeps (WorkerSpec.keeps) -> the page the step is done in.
PAGES = {BrowserKeeps.SESSION_ID: BrowserInterpreter, BrowserKeeps.CONVERSATION: DemoPageInterpreter}


def interpreter(spec: WorkerSpec, emit: Emit) -> BrowserInterpreter:
    return PAGES[BrowserKeeps(spec.keeps)](spec, emit)


if __name__ == "__main__":
    run_and_exit(interpreter)
