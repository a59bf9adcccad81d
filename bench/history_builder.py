"""Build sessions with long histories: ``python -m bench.history_builder --home H ...``.

One process, one runtime, one home: for each requested size N it creates the session
``history-N``, tells the fact in turn 1, sends N-1 filler turns about another topic (so
the only statement of the fact is turn 1, however long the history), and closes it.
Driven through the tool's ``Runtime`` class (``handoff.worker.sdk``), so this script does
not import ``copilot`` itself.

Each turn makes the runtime send the whole history to the model, so a turn costs more the
longer the session is and building N turns grows faster than N. ``--deadline`` caps the
build: when it passes, the session being built is closed where it is and reported with
the number of turns it actually has. One JSON line per session on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from handoff.fact import Fact
from handoff.worker.sdk import Provider, Runtime

FILLER_TOPIC = "filler item"


def session_id_for(size: int) -> str:
    return f"history-{size}"


async def build(options: argparse.Namespace) -> None:
    fact = Fact(options.fact, options.topic)
    runtime = Runtime(options.runtime, options.home, Provider(f"{options.witness}/v1", "handoff-witness", {}))
    deadline = time.monotonic() + options.deadline
    await runtime.start()
    try:
        for size in options.sizes:
            started = time.monotonic()
            session = await runtime.create(session_id_for(size))
            turn_ms: list[float] = []
            for turn in range(1, size + 1):
                prompt = fact.remember_prompt if turn == 1 else Fact(str(turn), FILLER_TOPIC).remember_prompt
                sent = time.monotonic()
                answer = await runtime.send(session, prompt, {})
                turn_ms.append((time.monotonic() - sent) * 1000)
                if answer != "OK":
                    raise RuntimeError(f"turn {turn} of {session_id_for(size)} answered {answer!r}")
                if time.monotonic() > deadline:
                    break
            await runtime.close(session)
            tail = turn_ms[-max(1, len(turn_ms) // 10):]
            print(json.dumps({
                "size": size, "turns": len(turn_ms), "session_id": session_id_for(size),
                "build_ms": round((time.monotonic() - started) * 1000),
                "first_turn_ms": round(turn_ms[0], 1), "last_turns_ms": round(sum(tail) / len(tail), 1),
                "capped": len(turn_ms) < size,
            }), flush=True)
            if time.monotonic() > deadline:
                break
    finally:
        await runtime.stop()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.history_builder", description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True)
    parser.add_argument("--witness", required=True)
    parser.add_argument("--runtime", required=True)
    parser.add_argument("--sizes", type=lambda text: [int(n) for n in text.split(",")], required=True)
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds for the whole build")
    parser.add_argument("--fact", default=Fact().value)
    parser.add_argument("--topic", default=Fact().topic)
    asyncio.run(build(parser.parse_args()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
