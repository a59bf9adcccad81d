"""The chat's HTTP face: one page and a small JSON API, as a Starlette app.

Routes (every ``/api`` one but login needs the login cookie):

* ``GET /`` the page (handoff/chat/templates/page.html);
* ``POST /api/login`` ``{"user", "password"}`` sets the cookie; ``POST /api/logout``;
* ``GET /api/me`` who is logged in (401: nobody);
* ``GET /api/sessions`` the user's sessions, most recent first; ``POST`` makes a new one;
* ``GET /api/sessions/{id}`` its conversation, from the store;
* ``POST /api/sessions/{id}/turns`` ``{"text"}`` resumes it, sends, closes: the answer;
* ``GET /demo`` the lab's demo app as it was (handoff/chat/demo.py), the browser keeping
  the conversation: ``POST /api/demo/new`` a new chat, ``POST /api/demo/turns`` ``{"text"}``
  the answer in the session the server remembers for the user;
* ``GET /page.css``, ``GET /chat.js`` what both pages share.

A session that is not the caller's is 403 with the guard's words, whoever owns it; one
that is theirs but busy (another writer holds its lease) is 409.
"""

from __future__ import annotations

import contextlib
import logging
from importlib.resources import files
from typing import Any, Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from handoff.chat.accounts import LOGIN_SECONDS, Accounts
from handoff.chat.conversations import Conversations, Refused, refusal_status
from handoff.chat.demo import DemoChats

log = logging.getLogger("copilot.chat")  # with the SDK's records, in the store's log (handoff/app/chat.py)
COOKIE = "handoff_chat_login"
MAX_TEXT = 4_000  # characters of one message


# What the app serves besides its API: the two pages (handoff/chat/templates/, made once
# at the start) and what they share; name -> media type.
SERVED = {"page.html": "text/html", "demo.html": "text/html", "page.css": "text/css", "chat.js": "text/javascript"}


def served(name: str) -> str:
    if name.endswith(".html"):
        from jinja2 import Environment, PackageLoader

        pages = Environment(loader=PackageLoader("handoff.chat", "templates"), autoescape=True)
        return pages.get_template(name).render()
    return files("handoff.chat").joinpath(name).read_text(encoding="utf-8")


def make_app(accounts: Accounts, conversations: Conversations) -> Starlette:
    """The chat's app; its ``state.demo`` is the demo page's server memory (DemoChats)."""
    demo = DemoChats(conversations)
    shown = {name: served(name) for name in SERVED}

    def logged_in(handler: Callable[[Request, str], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def checked(request: Request) -> Response:
            user = accounts.user_of(request.cookies.get(COOKIE))
            if user is None:
                return _error(401, "log in first")
            try:
                return await handler(request, user)
            except Refused as refused:
                return _error(refusal_status(refused), str(refused))
            except Exception as error:  # the runtime's or the store's: the page says so in a line
                log.exception("%s %s failed", request.method, request.url.path)
                said = " ".join(str(error).split())[:300] or type(error).__name__
                return _error(502, f"the server could not do it: {said}")
        return checked

    def serve(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            return Response(shown[name], media_type=SERVED[name], headers={"Cache-Control": "no-store"})
        return handler

    async def login(request: Request) -> Response:
        given = await _json(request)
        user, password = given.get("user"), given.get("password")
        token = accounts.log_in(user, password) if isinstance(user, str) and isinstance(password, str) else None
        if token is None:
            return _error(401, "no such user, or not their password")
        response = JSONResponse({"user": user})
        response.set_cookie(COOKIE, token, max_age=LOGIN_SECONDS, httponly=True, samesite="strict")
        return response

    async def logout(request: Request) -> Response:
        response = JSONResponse({})
        response.delete_cookie(COOKIE)
        return response

    async def me(request: Request, user: str) -> Response:
        return JSONResponse({"user": user, "model": conversations.model})

    async def sessions(request: Request, user: str) -> Response:
        if request.method == "POST":
            return JSONResponse({"id": conversations.new(user)}, status_code=201)
        return JSONResponse([{"id": s.session_id, "summary": s.summary, "last_active": s.last_active,
                              "turns": s.turns} for s in conversations.listed(user)])

    async def conversation(request: Request, user: str) -> Response:
        said = conversations.history(user, request.path_params["session_id"])
        return JSONResponse({"messages": [{"role": role, "text": text} for role, text in said]})

    async def turn(request: Request, user: str) -> Response:
        text = await _text(request)
        if text is None:
            return _error(400, f"send a message of 1 to {MAX_TEXT:,} characters")
        reply = await conversations.turn(user, request.path_params["session_id"], text)
        return JSONResponse({"reply": reply})

    async def demo_new(request: Request, user: str) -> Response:
        demo.new(user)  # the page is not told its id: it keeps the conversation instead
        return JSONResponse({}, status_code=201)

    async def demo_turn(request: Request, user: str) -> Response:
        text = await _text(request)
        if text is None:
            return _error(400, f"send a message of 1 to {MAX_TEXT:,} characters")
        return JSONResponse({"reply": await demo.turn(user, text)})

    app = Starlette(routes=[
        Route("/", serve("page.html")),
        Route("/demo", serve("demo.html")),
        Route("/page.css", serve("page.css")),
        Route("/chat.js", serve("chat.js")),
        Route("/api/login", login, methods=["POST"]),
        Route("/api/logout", logout, methods=["POST"]),
        Route("/api/me", logged_in(me)),
        Route("/api/sessions", logged_in(sessions), methods=["GET", "POST"]),
        Route("/api/sessions/{session_id}", logged_in(conversation)),
        Route("/api/sessions/{session_id}/turns", logged_in(turn), methods=["POST"]),
        Route("/api/demo/new", logged_in(demo_new), methods=["POST"]),
        Route("/api/demo/turns", logged_in(demo_turn), methods=["POST"]),
    ])
    app.state.demo = demo
    return app


def web_server(app: Starlette) -> Any:
    """uvicorn's server for ``app``, to be served on a socket already bound, without
    uvicorn's own signal handling: whoever serves it decides what a signal does."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):
            yield

    return Server(uvicorn.Config(app, log_level="warning", lifespan="off", log_config=None))


async def _json(request: Request) -> dict[str, Any]:
    """The request's JSON object; anything else reads as an empty one."""
    try:
        given = await request.json()
    except ValueError:
        return {}
    return given if isinstance(given, dict) else {}


async def _text(request: Request) -> str | None:
    """The message a turn sends, or None when there is none or it is too long."""
    text = (await _json(request)).get("text")
    return text if isinstance(text, str) and text.strip() and len(text) <= MAX_TEXT else None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)
