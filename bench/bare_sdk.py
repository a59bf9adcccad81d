"""The baseline: one side of a cross-process handoff written against the bare Copilot SDK.

This script is the project's one deliberate second importer of ``copilot`` (besides
``handoff/worker/sdk.py``): it must be the bare SDK, not the tool, because it is what the
tool's overhead is measured against. It uses nothing of the tool but ``handoff.fact.Fact``
(for the two prompts, so both sides send byte-identical turns).

Run it twice, each time as a new Python process:

    python bench/bare_sdk.py tell --home H --session-id ID --witness URL --runtime PATH
    python bench/bare_sdk.py ask  --home H --session-id ID --witness URL --runtime PATH

``tell`` (process A) creates the session with the given id, sends "Remember this: ...",
closes it and exits; ``ask`` (process B) resumes the same id from the same home
(``base_directory``), asks for the fact, closes and exits. The last line on stdout is one
JSON object with the answer and each phase's duration in milliseconds:

    process_start  from --spawned-at (the parent's time.monotonic() just before it spawned
                   us; CLOCK_MONOTONIC is system-wide on Linux) to this file's first line
    sdk_import     ``import copilot``
    runtime_start  CopilotClient.start(): spawn the runtime and connect over stdio
    open           create_session (tell) or resume_session (ask)
    turn           send_and_wait
    close          session.disconnect()
    teardown       CopilotClient.stop(): the runtime ends

and ``runtime_cpu_s``, the CPU seconds (user + system) of the runtime it started (its only
child, reaped by ``stop()``). The parent measures the rest (interpreter exit) from the wall
time it waited.

The runtime-settings benchmark (``bench/settings.py``) changes one setting at a time with
``--client-options JSON`` / ``--session-options JSON`` (keyword arguments added to
``CopilotClient(...)`` / to both ``create_session`` and ``resume_session``) and gives a
``--label`` so the witness can tag each request as evidence (the same headers the tool's
worker sends).
"""

import time

_FIRST_LINE_AT = time.monotonic()

import argparse  # noqa: E402  (the timestamp above must come first)
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from handoff.fact import Fact  # noqa: E402
from handoff.witness.tags import request_tags  # noqa: E402

TURN_TIMEOUT_SECONDS = 120.0


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bare_sdk.py", description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("tell", "ask"))
    parser.add_argument("--home", required=True, help="base_directory, shared by A and B")
    parser.add_argument("--session-id", required=True)
    parser.add_argument("--witness", required=True, help="the witness model's base URL, http://HOST:PORT")
    parser.add_argument("--runtime", required=True, help="the Copilot runtime executable")
    parser.add_argument("--fact", default=Fact().value)
    parser.add_argument("--topic", default=Fact().topic)
    parser.add_argument("--spawned-at", type=float, default=None, help="parent's time.monotonic() at spawn")
    parser.add_argument("--client-options", type=json.loads, default={}, help="JSON: more CopilotClient keywords")
    parser.add_argument("--session-options", type=json.loads, default={},
                        help="JSON: more create_session / resume_session keywords")
    parser.add_argument("--label", default=None, help="tag the witness's requests with this scenario label")
    return parser.parse_args(argv)


async def _handoff_side(options: argparse.Namespace, phases: dict[str, float]) -> str | None:
    def lap(name: str, since: float) -> float:
        now = time.monotonic()
        phases[name] = round((now - since) * 1000, 1)
        return now

    started = time.monotonic()
    from copilot import CopilotClient
    from copilot.client import RuntimeConnection
    from copilot.session import PermissionHandler

    started = lap("sdk_import", started)
    fact = Fact(options.fact, options.topic)
    provider = {
        "type": "openai",
        "wire_api": "completions",
        "base_url": f"{options.witness}/v1",
        "api_key": "bare-sdk-baseline",
    }
    if options.label:
        provider["headers"] = request_tags(options.label, "A" if options.mode == "tell" else "B", "local", fact)
    client = CopilotClient(
        connection=RuntimeConnection.for_stdio(path=options.runtime),
        base_directory=options.home,
        use_logged_in_user=False,
        **options.client_options,
    )
    await client.start()
    started = lap("runtime_start", started)
    answer = None
    try:
        settings = dict(model="handoff-witness", provider=provider, streaming=False,
                        on_permission_request=PermissionHandler.approve_all, **options.session_options)
        if options.mode == "tell":
            session = await client.create_session(session_id=options.session_id, **settings)
            prompt = fact.remember_prompt
        else:
            session = await client.resume_session(options.session_id, **settings)
            prompt = fact.question_prompt
        started = lap("open", started)
        reply = await session.send_and_wait(prompt, timeout=TURN_TIMEOUT_SECONDS)
        answer = getattr(reply.data, "content", None) if reply else None
        started = lap("turn", started)
        await session.disconnect()
        started = lap("close", started)
    finally:
        phases_threads = _runtime_threads_cpu()
        await client.stop()
        lap("teardown", started)
        _THREADS.update(phases_threads)
    return answer


_THREADS: dict[str, float] = {}  # the runtime's CPU seconds per thread name, just before stop()


def _runtime_threads_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process's children (the runtime), summed by the
    thread's name (main, V8 workers, libuv pool, ...), read from /proc before stop()."""
    tick = os.sysconf("SC_CLK_TCK")
    by_name: dict[str, float] = {}
    try:
        children = Path(f"/proc/self/task/{os.getpid()}/children").read_text().split()
    except OSError:
        return by_name
    for child in children:
        for task in Path(f"/proc/{child}/task").glob("*"):
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue  # the thread ended meanwhile
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            by_name[name] = round(by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick, 3)
    return by_name


def main(argv: list[str] | None = None) -> int:
    options = _options(sys.argv[1:] if argv is None else argv)
    phases: dict[str, float] = {}
    if options.spawned_at is not None:
        phases["process_start"] = round((_FIRST_LINE_AT - options.spawned_at) * 1000, 1)
    answer = asyncio.run(_handoff_side(options, phases))
    fact = Fact(options.fact, options.topic)
    kept = fact.is_in(answer) if options.mode == "ask" else None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the runtime, reaped by stop()
    print(json.dumps({"mode": options.mode, "answer": answer, "kept": kept, "phases_ms": phases,
                      "runtime_cpu_s": round(usage.ru_utime + usage.ru_stime, 3), "runtime_threads_s": _THREADS}),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
